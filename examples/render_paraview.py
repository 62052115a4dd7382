# SPDX-License-Identifier: MIT
"""Render one time of a sim run to a PNG with ParaView: the pressure field
coloured, the particles as black points.

    pvpython examples/render_paraview.py out/box -o box.png
    xvfb-run -a pvbatch examples/render_paraview.py out/channel/sim.xdmf --array vorticity --time 20

The first argument is a run's output directory or its sim.xdmf. A run
without particles shows the grid alone.

(Without a display, run it under xvfb-run: Debian's ParaView renders through
X, so pvbatch --force-offscreen-rendering alone works only with an EGL or
OSMesa build.) Options: --time T (default: the last snapshot), --array NAME
(pressure, vorticity, divergence, velocity, solid), --size WIDTH in pixels,
--point-size P.
"""
import argparse
import os
import sys

from paraview.simple import (ColorBy, CreateView, ExtractBlock, GetColorTransferFunction, SaveScreenshot, Show,
                             Transform, XDMFReader)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("xdmf", nargs="?", default="out/box", help="a run's OUTPUT directory or its OUTPUT/sim.xdmf")
    p.add_argument("-o", "--output", default=None, help="PNG to write (default: next to the xdmf)")
    p.add_argument("--time", type=float, default=None, help="simulated time to show [s] (default: last)")
    p.add_argument("--array", default="pressure", help="cell array to colour the grid by")
    p.add_argument("--size", type=int, default=1200, help="image width [px]")
    p.add_argument("--point-size", type=float, default=1.0, help="particle size [px]")
    return p.parse_args()


def main():
    args = parse_args()
    if os.path.isdir(args.xdmf):
        args.xdmf = os.path.join(args.xdmf, "sim.xdmf")
    if not os.path.isfile(args.xdmf):
        sys.exit(f"render_paraview: {args.xdmf}: no such file (give a run's output directory or its sim.xdmf)")
    reader = XDMFReader(FileNames=[os.path.abspath(args.xdmf)])
    times = list(reader.TimestepValues) or [0.0]
    t = times[-1] if args.time is None else min(times, key=lambda v: abs(v - args.time))

    # The reader names each time's blocks grid, grid[1], ...: select by prefix.
    grid = ExtractBlock(Input=reader, Selectors=['/Root/*[starts-with(@label, "grid")]'])
    particles = ExtractBlock(Input=reader, Selectors=['/Root/*[starts-with(@label, "particles")]'])
    grid.UpdatePipeline(t)
    x0, x1, y0, y1, z0, z1 = grid.GetDataInformation().GetBounds()
    # The grid is a slab one cell thick (z in [0, dz]) and the particles lie
    # at z = 0: lift them above its top face so the camera sees them.
    lifted = Transform(Input=particles)
    lifted.Transform.Translate = [0.0, 0.0, 2.0 * (z1 - z0)]

    width = args.size
    height = max(1, int(round(width * (y1 - y0) / (x1 - x0))))
    view = CreateView("RenderView")
    view.ViewSize = [width, height]
    view.ViewTime = t
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0

    shown = Show(grid, view)
    shown.SetRepresentationType("Surface")  # image data defaults to an outline
    ColorBy(shown, ("CELLS", args.array))
    shown.RescaleTransferFunctionToDataRange(True, False)
    shown.SetScalarBarVisibility(view, True)
    bar = GetColorTransferFunction(args.array)
    bar.ApplyPreset("Cool to Warm", True)

    # A run without particles has no points to show (and colouring an
    # empty block fails): the grid alone then.
    particles.UpdatePipeline(t)
    if particles.GetDataInformation().GetNumberOfPoints() > 0:
        dots = Show(lifted, view)
        dots.SetRepresentationType("Points")
        ColorBy(dots, None)
        dots.AmbientColor = dots.DiffuseColor = [0.0, 0.0, 0.0]
        dots.PointSize = args.point_size

    # Looking down -z with y up: x to the right, as in the simulation.
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    view.CameraPosition = [cx, cy, 10.0 * max(x1 - x0, y1 - y0)]
    view.CameraFocalPoint = [cx, cy, 0.0]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelProjection = 1
    view.ResetCamera(False)
    view.CameraPosition = [cx, cy, 10.0 * max(x1 - x0, y1 - y0)]
    view.CameraParallelScale = 0.5 * (y1 - y0)

    out = args.output or os.path.join(os.path.dirname(os.path.abspath(args.xdmf)), f"{args.array}.png")
    SaveScreenshot(out, view, ImageResolution=[width, height])
    print(f"{out}: {args.array} at t = {t:.6g} s")


if __name__ == "__main__":
    main()
