# A tree of 100 directories of 1,000 small files each, walked 5 times (the
# same work as fs_walk.csp: sorted names, lstat of every entry, one record each).
import os
import shutil
import tempfile

root = tempfile.mkdtemp(prefix="py-bench-walk-")
for d in range(100):
    dir = os.path.join(root, f"d{d}")
    os.mkdir(dir)
    for f in range(1000):
        with open(os.path.join(dir, f"f{f}.txt"), "w") as fh:
            fh.write("x" * (f % 10))


def walk(top, out):
    for name in sorted(os.listdir(top)):
        p = os.path.join(top, name)
        st = os.lstat(p)
        kind = "dir" if os.path.isdir(p) and not os.path.islink(p) else "file"
        out.append({"path": p, "kind": kind, "size": st.st_size})
        if kind == "dir":
            walk(p, out)
    return out


files = 0
size = 0
for round in range(5):
    for e in walk(root, []):
        if e["kind"] == "file":
            files += 1
            size += e["size"]
shutil.rmtree(root)
print(files, size)
