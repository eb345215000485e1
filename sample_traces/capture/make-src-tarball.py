#!/usr/bin/python3
"""Write a source-tree-like tarball (many small text files in nested directories).

    make-src-tarball.py OUT.tar FILES [SEED] [LARGE_PER_MILLE]

Deterministic for a given FILES, SEED (default 1) and LARGE_PER_MILLE (default 0):
directory depth 1-4, 8-40 files a directory, file sizes log-normal around 3 KiB (median),
clipped to 64 B - 256 KiB, like a kernel tree's .c/.h files; contents are lines of
pseudo-random identifiers (compressible text, never zeros, so btrfs stores real data).
LARGE_PER_MILLE of every 1,000 files are instead large, log-uniform 256 KiB - 8 MiB, as
the generated sources, test data and binaries of a big tree (the published delalloc
benchmark untarred Firefox's 1.5 GiB); their text is one 64 KiB block repeated. The large
files are drawn from a second generator, so the small files are the same with or
without them. Made locally: no download.
"""
import io
import math
import random
import sys
import tarfile

WORDS = [w for w in "static int struct void return unsigned long const char if else for while "
         "switch case break goto err out page inode folio bio mutex lock unlock spin rcu list "
         "head next prev size count offset index flags mask state ret len buf data ptr".split()]


def text(rng: random.Random, size: int) -> bytes:
    out, n = [], 0
    while n < size:
        line = "\t" * rng.randint(0, 3) + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) + ";\n"
        out.append(line)
        n += len(line)
    return "".join(out).encode()[:size]


def main() -> None:
    out, nfiles = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    large_per_mille = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rng, large_rng = random.Random(seed), random.Random(seed + 1_000_000)
    block = text(random.Random(seed + 2_000_000), 64 * 1024)
    total = 0
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        made, d = 0, 0
        while made < nfiles:
            depth = rng.randint(1, 4)
            path = "src/" + "/".join(f"d{rng.randint(0, 30)}" for _ in range(depth - 1)) + f"/dir{d}"
            d += 1
            for _ in range(min(rng.randint(8, 40), nfiles - made)):
                size = int(min(256 * 1024, max(64, rng.lognormvariate(8.0, 1.1))))
                body = text(rng, size)
                if large_per_mille and large_rng.random() < large_per_mille / 1000:
                    size = int(math.exp(large_rng.uniform(math.log(256 * 1024), math.log(8 << 20))))
                    body = (block * (size // len(block) + 1))[:size]
                info = tarfile.TarInfo(f"{path}/f{made}.{rng.choice('ch')}")
                info.size, info.mtime, info.mode = len(body), 1_700_000_000, 0o644
                tar.addfile(info, io.BytesIO(body))
                made += 1
                total += len(body)
    print(f"{out}: {nfiles} files, {total} bytes of file data", file=sys.stderr)


if __name__ == "__main__":
    main()
