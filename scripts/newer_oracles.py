#!/usr/bin/env python3
"""Fetch the newer oracles (Redis 8 and Valkey 9 from Debian sid) into
build/oracles/<name>/ without installing anything on the machine.

Usage: python3 scripts/newer_oracles.py [--quiet] [redis8] [valkey9]
       (no names: both).  Called by scripts/newer_oracles.sh.

What it does, per oracle:
  1. reads sid's signed InRelease (checked with gpgv against
     /usr/share/keyrings/debian-archive-keyring.gpg when both exist) and the
     Packages.xz it lists, whose SHA256 must match InRelease;
  2. downloads the package holding the server binary, verifies its SHA256
     against the Packages index, extracts it with `dpkg-deb -x` into
     build/oracles/<name>/root;
  3. walks the binary's DT_NEEDED entries (`readelf -d`) and those of every
     library it pulls in, maps each soname to the sid package that ships it
     (SONAME_PACKAGES below), and fetches exactly those packages the same
     way (libc6 included: its loader runs the binary), until every soname
     resolves inside root/;
  4. writes wrappers build/oracles/<name>/<tool> that run the binary with
     sid's own loader: ld-linux-x86-64.so.2 --library-path <root libs>
     --argv0 <tool> <binary>.

Idempotent: a finished oracle (its wrapper, a STAMP naming the verified
.debs) is left alone; downloaded .debs are cached in build/oracles/debs
and re-verified before use.  Exit status 0 when every requested oracle is
ready, 1 otherwise (the message says why).  Nothing outside build/oracles
is written.
"""
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "oracles")
MIRROR = os.environ.get("CAIRN_ORACLE_MIRROR", "http://deb.debian.org/debian")
SUITE = os.environ.get("CAIRN_ORACLE_SUITE", "sid")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# name -> (package holding the binaries, {wrapper name: path in package}, version prefix).
# The server is the check-rdb binary run under the server's name (argv[0]
# picks the mode; the -server package only adds that symlink and units).
ORACLES = {
    "redis8": ("redis-tools", {"redis-server": "usr/bin/redis-check-rdb",
                               "redis-cli": "usr/bin/redis-cli",
                               "redis-check-rdb": "usr/bin/redis-check-rdb"}, "5:8."),
    "valkey9": ("valkey-tools", {"valkey-server": "usr/bin/valkey-check-rdb",
                                 "valkey-cli": "usr/bin/valkey-cli",
                                 "valkey-check-rdb": "usr/bin/valkey-check-rdb"}, "9."),
}

# soname -> the sid package that ships it (the libraries these two servers
# and their dependencies need; an unknown soname is an error, not a guess).
SONAME_PACKAGES = {
    "libc.so.6": "libc6", "libm.so.6": "libc6", "ld-linux-x86-64.so.2": "libc6",
    "libpthread.so.0": "libc6", "libdl.so.2": "libc6", "librt.so.1": "libc6",
    "libatomic.so.1": "libatomic1", "libjemalloc.so.2": "libjemalloc2",
    "liblzf.so.1": "liblzf1", "libssl.so.3": "libssl3t64",
    "libcrypto.so.3": "libssl3t64", "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1", "libsystemd.so.0": "libsystemd0",
    "libcap.so.2": "libcap2", "libz.so.1": "zlib1g", "libzstd.so.1": "libzstd1",
    "liblz4.so.1": "liblz4-1", "liblzma.so.5": "liblzma5",
    "libgcrypt.so.20": "libgcrypt20", "libgpg-error.so.0": "libgpg-error0",
}
LIBDIRS = ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib64", "lib64")
QUIET = False


def say(msg):
    if not QUIET:
        print("newer_oracles: " + msg, flush=True)


def fetch(url, timeout=120):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


_INDEX = {}


def load_index():
    """The sid Packages index as {package: {field: value}}, verified (once per run)."""
    if _INDEX:
        return _INDEX
    os.makedirs(OUT, exist_ok=True)
    base = "%s/dists/%s" % (MIRROR, SUITE)
    inrel = fetch(base + "/InRelease", 60)
    if os.path.exists(KEYRING) and shutil.which("gpgv"):
        with tempfile.NamedTemporaryFile(suffix=".InRelease") as t:
            t.write(inrel)
            t.flush()
            r = subprocess.run(["gpgv", "--keyring", KEYRING, t.name],
                               capture_output=True)
            if r.returncode != 0:
                raise RuntimeError("InRelease signature check failed: %s"
                                   % r.stderr.decode(errors="replace")[-400:])
        say("InRelease signature verified (gpgv, %s)" % KEYRING)
    else:
        say("gpgv or debian-archive-keyring missing: InRelease signature not checked")
    text = inrel.decode("utf-8", "replace")
    sec = text.split("SHA256:", 1)[1] if "SHA256:" in text else ""
    want = None
    for line in sec.splitlines()[1:]:
        if not line.startswith(" "):
            break
        parts = line.split()
        if len(parts) == 3 and parts[2] == "main/binary-amd64/Packages.xz":
            want = parts[0]
    if not want:
        raise RuntimeError("InRelease lists no SHA256 for main/binary-amd64/Packages.xz")
    cache = os.path.join(OUT, "Packages.xz")
    data = None
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            data = f.read()
        if sha256(data) != want:
            data = None
    if data is None:
        data = fetch(base + "/main/binary-amd64/Packages.xz", 300)
        if sha256(data) != want:
            raise RuntimeError("Packages.xz SHA256 does not match InRelease")
        with open(cache + ".tmp", "wb") as f:
            f.write(data)
        os.replace(cache + ".tmp", cache)
    say("Packages.xz SHA256 matches InRelease")
    index = {}
    for para in lzma.decompress(data).decode("utf-8", "replace").split("\n\n"):
        fields = {}
        for line in para.splitlines():
            m = re.match(r"^([A-Za-z0-9-]+): (.*)$", line)
            if m:
                fields[m.group(1)] = m.group(2)
        if "Package" in fields and fields.get("Architecture") in ("amd64", "all"):
            index[fields["Package"]] = fields
    _INDEX.update(index)
    return _INDEX


def get_deb(index, pkg):
    """Path of pkg's .deb in the cache, downloaded if needed, SHA256 verified."""
    if pkg not in index:
        raise RuntimeError("package %s not in %s's index" % (pkg, SUITE))
    f = index[pkg]
    debs = os.path.join(OUT, "debs")
    os.makedirs(debs, exist_ok=True)
    path = os.path.join(debs, os.path.basename(f["Filename"]))
    if os.path.exists(path):
        with open(path, "rb") as fh:
            if sha256(fh.read()) == f["SHA256"]:
                return path
    say("downloading %s %s" % (pkg, f["Version"]))
    data = fetch("%s/%s" % (MIRROR, f["Filename"]), 300)
    if sha256(data) != f["SHA256"]:
        raise RuntimeError("%s: SHA256 mismatch against the Packages index" % pkg)
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.replace(path + ".tmp", path)
    return path


def needed(path):
    """DT_NEEDED sonames of an ELF file (readelf -d)."""
    r = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("readelf -d %s: %s" % (path, r.stderr.strip()))
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


def find_lib(root, soname):
    for d in LIBDIRS:
        p = os.path.join(root, d, soname)
        if os.path.exists(p):
            return p
    return None


def build(index, name):
    pkg, tools, vprefix = ORACLES[name]
    dest = os.path.join(OUT, name)
    stamp = os.path.join(dest, "STAMP")
    if os.path.exists(stamp) and all(os.access(os.path.join(dest, t), os.X_OK) for t in tools):
        say("%s ready (%s)" % (name, open(stamp).readline().strip()))
        return True
    if index is None:
        index = load_index()
    ver = index.get(pkg, {}).get("Version", "")
    if not ver.startswith(vprefix):
        raise RuntimeError("%s in %s is %r, not %s*" % (pkg, SUITE, ver, vprefix))
    tmp = dest + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    root = os.path.join(tmp, "root")
    os.makedirs(root)
    got = []

    def extract(p):
        deb = get_deb(index, p)
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        got.append("%s %s %s" % (p, index[p]["Version"], index[p]["SHA256"]))

    extract(pkg)
    # Walk DT_NEEDED from the binaries through every library they pull in.
    todo = [os.path.join(root, p) for p in set(tools.values())]
    seen = set()
    while todo:
        elf = todo.pop()
        for so in needed(elf):
            if so in seen:
                continue
            seen.add(so)
            lib = find_lib(root, so)
            if lib is None:
                p = SONAME_PACKAGES.get(so)
                if p is None:
                    raise RuntimeError("%s needs %s, which no known package ships" % (elf, so))
                extract(p)
                lib = find_lib(root, so)
                if lib is None:
                    raise RuntimeError("%s did not ship %s" % (p, so))
            todo.append(os.path.realpath(lib))
    loader = find_lib(root, "ld-linux-x86-64.so.2")
    if loader is None:
        extract("libc6")
        loader = find_lib(root, "ld-linux-x86-64.so.2")
    libpath = ":".join("$D/root/" + d for d in LIBDIRS if os.path.isdir(os.path.join(root, d)))
    for tool, rel in tools.items():
        w = os.path.join(tmp, tool)
        with open(w, "w") as fh:
            fh.write("#!/bin/sh\n# %s from Debian %s, run with its own loader (scripts/newer_oracles.py)\n"
                     "D=$(dirname \"$(readlink -f \"$0\")\")\n"
                     "exec \"$D/root/%s\" --library-path \"%s\" --argv0 \"%s\" \"$D/root/%s\" \"$@\"\n"
                     % (tool, SUITE, os.path.relpath(loader, root), libpath, tool, rel))
        os.chmod(w, 0o755)
    # The wrapper must run: the server prints its version.
    server = os.path.join(tmp, [t for t in tools if t.endswith("-server")][0])
    r = subprocess.run([server, "--version"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0 or "v=" not in r.stdout:
        raise RuntimeError("%s --version failed: %s%s" % (server, r.stdout, r.stderr))
    with open(os.path.join(tmp, "STAMP"), "w") as fh:
        fh.write(r.stdout.strip() + "\n" + "\n".join(got) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    say("%s ready: %s (packages: %s)" % (name, r.stdout.strip(), ", ".join(g.split()[0] for g in got)))
    return True


def main(argv):
    global QUIET
    if "--quiet" in argv:
        QUIET = True
        argv = [a for a in argv if a != "--quiet"]
    names = argv or list(ORACLES)
    ok = True
    index = None
    for n in names:
        if n not in ORACLES:
            print("newer_oracles: unknown oracle %s (known: %s)" % (n, ", ".join(ORACLES)), file=sys.stderr)
            return 2
        try:
            build(index, n)
        except Exception as e:  # network, checksum, layout: say why, carry on
            print("newer_oracles: %s not available: %s" % (n, e), file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
