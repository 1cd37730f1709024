# Decode attention variants (issue 25, branch attn3): the decode section of
# the generated kernels/attention.hip with its knobs (#ifndef defaults in
# kernels/src/attention.hip.in) set per variant. Writes v/d_NAME.hip and
# variants.txt (NAME P64 P128: the partition sizes the host grid must use).
import os, sys
src = open(sys.argv[1]).read()
dec = src[:src.index('// ---- prefill ----')]
V = [  # name, part64, part128, U, qlds, vpre, minb
    ('p256u4q', 256, 256, 4, 1, 0, 1),
    ('p256u4qv2', 256, 256, 4, 1, 2, 1),
    ('p128u2q', 128, 128, 2, 1, 0, 1),
    ('p128u4q', 128, 128, 4, 1, 0, 1),
    ('p128u4qv1', 128, 128, 4, 1, 1, 1),
    ('p128u4qv2', 128, 128, 4, 1, 2, 1),
    ('p128u4qv2m4', 128, 128, 4, 1, 2, 4),
    ('p64u2qv2', 64, 64, 2, 1, 2, 1),
    ('p64u4qv2', 64, 64, 4, 1, 2, 1),
    ('p64u4v2', 64, 64, 4, 0, 2, 1),
    ('p32u2qv2', 32, 32, 2, 1, 2, 1),
]
os.makedirs('v', exist_ok=True)
with open('variants.txt', 'w') as f:
    for n, p64, p128, u, q, v, m in V:
        hdr = '#define ATT_PART64 %d\n#define ATT_PART128 %d\n#define ATT_U %d\n#define ATT_QLDS %d\n#define ATT_VPRE %d\n#define ATT_MINB %d\n' % (p64, p128, u, q, v, m)
        open('v/d_%s.hip' % n, 'w').write(hdr + dec)
        f.write('%s %d %d\n' % (n, p64, p128))
