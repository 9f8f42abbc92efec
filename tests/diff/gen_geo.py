"""Differential stream for the geo commands (area "geo").

Geo sets g0..g3 grow from a few members (listpack) past 128 (skiplist).
Points are uniform over the globe, clustered around a few centres (so
searches return many members and COUNT cuts real lists), or on the edges:
longitude +-180 and near the antimeridian, latitude +-85.05112878 and near
the poles, the equator and the prime meridian.  Searches use every form
(GEORADIUS, GEORADIUSBYMEMBER and their _RO forms, GEOSEARCH FROMMEMBER /
FROMLONLAT with BYRADIUS / BYBOX, GEOSEARCHSTORE), every unit, radii and
boxes from 0 to beyond the Earth's size, WITHCOORD / WITHDIST / WITHHASH,
ASC / DESC, COUNT with and without ANY, STORE / STOREDIST (the stored set
is read back with ZRANGE ... WITHSCORES); plus GEODIST, GEOHASH, GEOPOS,
GEOADD NX / XX / CH and the error paths (bad coordinates, units, radii,
counts, option combinations, wrong types).

Some members share a position (SPOTS), so distances tie: a full sort must
keep Redis's scan order and a COUNT cut must follow its partial quicksort.
"""
import generators

AREA = "geo"
COMMANDS = 20000

KEYS = [b"g0", b"g1", b"g2", b"g3"]
ALL_KEYS = KEYS + [b"str", b"missing"]
UNITS = [b"m", b"km", b"ft", b"mi", b"M", b"KM", b"Mi"]
LAT_MAX = 85.05112878
CENTRES = [(13.36, 38.11), (179.9, 10.0), (-179.95, -20.0), (0.0, 0.0), (20.0, 84.9),
           (-100.0, -84.95), (151.2, -33.86)]


def _f(x):
    return (b"%.6f" % x) if isinstance(x, float) else str(x).encode()


SPOTS = [(13.5, 38.0), (179.95, 10.02), (0.0005, 0.0005), (20.1, 84.95), (-99.9, -84.99)]


def _point(rng):
    r = rng.random()
    if r < 0.06:
        return rng.choice(SPOTS)
    if r < 0.4:
        return rng.uniform(-180, 180), rng.uniform(-LAT_MAX, LAT_MAX)
    if r < 0.75:
        cx, cy = rng.choice(CENTRES)
        d = rng.choice([0.001, 0.05, 1.0, 5.0])
        x = max(-180.0, min(180.0, cx + rng.uniform(-d, d)))
        y = max(-LAT_MAX, min(LAT_MAX, cy + rng.uniform(-d, d)))
        return x, y
    edge = rng.randrange(6)
    if edge == 0:
        return rng.choice([180, -180]), rng.uniform(-LAT_MAX, LAT_MAX)
    if edge == 1:
        return rng.uniform(-180, 180), rng.choice([LAT_MAX, -LAT_MAX])
    if edge == 2:
        return rng.choice([1, -1]) * rng.uniform(179.0, 180.0), rng.uniform(-60, 60)
    if edge == 3:
        return rng.uniform(-180, 180), rng.choice([1, -1]) * rng.uniform(80.0, LAT_MAX)
    if edge == 4:
        return rng.uniform(-1, 1), rng.uniform(-1, 1)
    return rng.uniform(-180, 180), rng.uniform(-0.01, 0.01)


def _coord_args(x, y):
    if isinstance(x, int) or isinstance(y, int):
        return [str(x).encode(), _f(y) if isinstance(y, float) else str(y).encode()]
    if abs(abs(y) - LAT_MAX) < 1e-12:
        return [_f(x), b"%.8f" % y]
    return [_f(x), _f(y)]


class Model:
    def __init__(self):
        self.members = {k: [] for k in KEYS}
        self.n = 0

    def new_member(self):
        self.n += 1
        return b"m%d" % self.n

    def existing(self, rng, k):
        ms = self.members.get(k, [])
        return rng.choice(ms) if ms and rng.random() < 0.9 else b"nosuch"


def _geoadd(rng, m, k):
    args = [b"GEOADD", k]
    r = rng.random()
    if r < 0.1:
        args.append(rng.choice([b"NX", b"XX", b"CH", b"ch"]))
    elif r < 0.15:
        args += [b"XX", b"CH"]
    n = rng.choice([1, 1, 2, 5, 20, 60])
    for _ in range(n):
        x, y = _point(rng)
        if m.members[k] and rng.random() < 0.2:
            mem = rng.choice(m.members[k])      # moves an existing member
        else:
            mem = m.new_member()
            if b"XX" not in args:
                m.members[k].append(mem)
        args += _coord_args(x, y) + [mem]
    return tuple(args)


def _radius(rng):
    r = rng.random()
    if r < 0.05:
        return b"0"
    if r < 0.1:
        return rng.choice([b"abc", b"-1", b"nan", b"inf"])
    return b"%g" % (10 ** rng.uniform(-1, 7.5))


def _opts(rng, allow_store, search=False):
    out = []
    for flag in (b"WITHCOORD", b"WITHDIST", b"WITHHASH"):
        if rng.random() < 0.3 and not allow_store:
            out.append(flag)
    if rng.random() < 0.5:
        out.append(rng.choice([b"ASC", b"DESC", b"asc"]))
    r = rng.random()
    if r < 0.35:
        out += [b"COUNT", str(rng.choice([1, 2, 3, 5, 10, 50])).encode()]
        if rng.random() < 0.3:
            out.append(b"ANY")
    elif r < 0.38:
        out += [b"COUNT", rng.choice([b"0", b"-1", b"x"])]
    elif r < 0.4:
        out.append(b"ANY")
    rng.shuffle(out)
    return out


def _center(rng):
    x, y = _point(rng) if rng.random() < 0.7 else rng.choice(CENTRES)
    if rng.random() < 0.03:
        return [b"181", b"10"] if rng.random() < 0.5 else [b"10", b"86"]
    return _coord_args(x, y)


def _search(rng, m, k):
    r = rng.random()
    if r < 0.5:
        cmd = [b"GEOSEARCH", k]
        dst = None
    else:
        dst = rng.choice([b"d0", b"d1"])
        cmd = [b"GEOSEARCHSTORE", dst, k]
    if rng.random() < 0.4:
        cmd += [b"FROMMEMBER", m.existing(rng, k)]
    else:
        cmd += [b"FROMLONLAT"] + _center(rng)
    if rng.random() < 0.5:
        cmd += [b"BYRADIUS", _radius(rng), rng.choice(UNITS)]
    else:
        cmd += [b"BYBOX", _radius(rng), _radius(rng), rng.choice(UNITS)]
    cmd += _opts(rng, dst is not None, search=True)
    if dst and rng.random() < 0.4:
        cmd.append(b"STOREDIST")
    out = [tuple(cmd)]
    if dst:
        out.append((b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES"))
    return out


def _radius_cmd(rng, m, k):
    bymember = rng.random() < 0.4
    ro = rng.random() < 0.3
    name = (b"GEORADIUSBYMEMBER" if bymember else b"GEORADIUS") + (b"_RO" if ro else b"")
    cmd = [name, k] + ([m.existing(rng, k)] if bymember else _center(rng))
    cmd += [_radius(rng), rng.choice(UNITS)]
    store = not ro and rng.random() < 0.25
    cmd += _opts(rng, store)
    out = []
    if store:
        dst = rng.choice([b"d0", b"d1"])
        cmd += [rng.choice([b"STORE", b"STOREDIST"]), dst]
        out.append(tuple(cmd))
        out.append((b"ZRANGE", dst, b"0", b"-1", b"WITHSCORES"))
    else:
        out.append(tuple(cmd))
    return out


def _misc(rng, m, k):
    r = rng.randrange(14)
    if r == 0:
        return [(b"GEODIST", k, m.existing(rng, k), m.existing(rng, k))]
    if r == 1:
        return [(b"GEODIST", k, m.existing(rng, k), m.existing(rng, k), rng.choice(UNITS + [b"yd"]))]
    if r == 2:
        return [(b"GEOHASH", k, *[m.existing(rng, k) for _ in range(rng.randint(0, 4))])]
    if r == 3:
        return [(b"GEOPOS", k, *[m.existing(rng, k) for _ in range(rng.randint(0, 4))])]
    if r == 4:
        return [(b"GEOADD", k, *_coord_args(*_point(rng)), b"m1", b"1")]
    if r == 5:
        return [(b"GEOADD", k, rng.choice([b"181", b"-180.5", b"abc", b"0"]),
                 rng.choice([b"86", b"-85.06", b"0", b"x"]), b"bad")]
    if r == 6:
        return [(b"GEOADD", k, b"NX", b"XX", b"1", b"2", b"m")]
    if r == 7:
        return [(b"GEOSEARCH", k, b"FROMLONLAT", b"1", b"2", b"FROMMEMBER", b"m1", b"BYRADIUS", b"1", b"km")]
    if r == 8:
        return [(b"GEOSEARCH", k, b"BYRADIUS", b"1", b"km", b"BYBOX", b"1", b"1", b"km",
                 b"FROMLONLAT", b"1", b"2")]
    if r == 9:
        return [(b"GEOSEARCH", k, b"FROMLONLAT", b"1", b"2", b"WITHDIST")]
    if r == 10:
        return [(b"GEORADIUS", k, b"1", b"2", b"10", b"km", b"STORE", b"d0", b"WITHDIST")]
    if r == 11:
        return [(b"GEOSEARCHSTORE", b"d0", k, b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km",
                 b"WITHCOORD")]
    if r == 12:
        return [(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES")]
    mem = m.existing(rng, k)
    return [(b"ZREM", k, mem)]


def generate(rng, n, now):
    m = Model()
    cmds = [(b"SET", b"str", b"x")]
    while len(cmds) < n:
        k = rng.choice(KEYS)
        r = rng.random()
        if r < 0.25:
            cmds.append(_geoadd(rng, m, k))
        elif r < 0.55:
            cmds += _search(rng, m, rng.choice(ALL_KEYS) if rng.random() < 0.05 else k)
        elif r < 0.8:
            cmds += _radius_cmd(rng, m, rng.choice(ALL_KEYS) if rng.random() < 0.05 else k)
        elif r < 0.995:
            cmds += _misc(rng, m, rng.choice(ALL_KEYS) if rng.random() < 0.05 else k)
        else:
            cmds.append((b"DEL", k))
            m.members[k] = []
    cmds = generators.finish(rng, cmds, n)
    cmds += [(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES") for k in KEYS]
    return cmds
