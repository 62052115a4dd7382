# SPDX-License-Identifier: MIT
# The largest absolute differences between two snapshots, grid datasets and
# particles matched by id:  python3 compare_snapshots.py A.h5 B.h5 LABEL
import h5py, numpy as np, sys
a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
out = []
for d in ['/grid/u', '/grid/v', '/grid/phi', '/grid/pressure', '/grid/divergence']:
    x, y = a[d][...].astype(np.float64), b[d][...].astype(np.float64)
    out.append('%s %.3g (of %.3g)' % (d.split('/')[-1], np.max(np.abs(x - y)), np.max(np.abs(x))))
if '/particles/id' in a:
    ida, idb = a['/particles/id'][...], b['/particles/id'][...]
    if len(ida) == 0 and len(idb) == 0:
        out.append('no particles')
    elif len(ida) != len(idb) or not (np.sort(ida) == np.sort(idb)).all():
        out.append('PARTICLE IDS DIFFER %d vs %d' % (len(ida), len(idb)))
    else:
        ia, ib = np.argsort(ida), np.argsort(idb)
        for d in ['position', 'velocity']:
            pa, pb = a['/particles/' + d][...][ia], b['/particles/' + d][...][ib]
            out.append('%s %.3g' % (d, np.max(np.abs(pa - pb))))
        out.append('n=%d' % len(ida))
print(sys.argv[3] + ': ' + ', '.join(out))
