"""Geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS(_RO),
GEORADIUSBYMEMBER(_RO), GEOSEARCH, GEOSEARCHSTORE.

Differential like test_strings.py: every command list runs on cairn and on
redis-server 7.0.15 and each raw reply must match byte for byte (scores via
ZRANGE WITHSCORES, distances, coordinates, order).  Run with
CAIRN_BIN=redis-server to re-check against real Redis.
"""
import pytest

from requires import require_commands
from test_strings import collect_events, diff

SICILY = ["GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
          "GEOADD Sicily 12.758489 38.788135 edge1 17.241510 38.788135 edge2"]

# Points on the edges of the geo ranges.
EDGES = ("GEOADD e 180 0 a1 -180 0 a2 179.9999 10 a3 -179.9999 10 a4 0 85.05112878 p1 "
         "0 -85.05112878 p2 90 85 p3 -90 -85 p4 179.5 84.9 p5 -179.5 -84.9 p6 0 0 o "
         "0.0001 -0.0001 o2 -120 60 q1 45 -45 q2")


@pytest.fixture(autouse=True)
def _needs_geo(server):
    require_commands(server, "geoadd")


def test_geoadd_scores_options_and_replies(server, oracle):
    r = diff(server, oracle, SICILY + [
        "ZRANGE Sicily 0 -1 WITHSCORES", "OBJECT ENCODING Sicily",
        "GEOADD Sicily 13.361389 38.115556 Palermo", "GEOADD Sicily CH 13.3 38.1 Palermo",
        "GEOADD Sicily NX 1 1 Palermo 2 2 new", "GEOADD Sicily XX 3 3 Palermo 4 4 new2",
        "GEOADD Sicily XX CH 5 5 Palermo", "GEOADD Sicily CH NX 5 5 Palermo 6 6 n3",
        "ZRANGE Sicily 0 -1 WITHSCORES", "GEOADD xx XX 1 1 a", "EXISTS xx",
        "GEOADD lim 180 85.05112878 a -180 -85.05112878 b", "ZRANGE lim 0 -1 WITHSCORES",
        "GEOPOS lim a b",
    ])
    assert r[0] == b":2\r\n"


def test_geoadd_errors(server, oracle):
    diff(server, oracle, [
        "GEOADD k 180.0001 0 a", "GEOADD k -180.0001 0 a", "GEOADD k 0 85.05112879 a",
        "GEOADD k 0 -85.06 a", "GEOADD k abc 0 a", "GEOADD k 0 nan a", "GEOADD k inf 0 a",
        "GEOADD k 1 2", "GEOADD k 1 2 a 3", "GEOADD k NX XX 1 2 a", "GEOADD k GT 1 2 a",
        "GEOADD k CH", "GEOADD k 1 2 a 200 2 b", "EXISTS k", "SET s x", "GEOADD s 1 2 a",
        "GEOADD k 1e1 2 a", "GEOADD k 0x10 2 b", "GEOADD k ' 1' 2 c",
        "ZRANGE k 0 -1 WITHSCORES",
    ])


def test_geodist_units_and_missing(server, oracle):
    diff(server, oracle, SICILY + [
        "GEODIST Sicily Palermo Catania", "GEODIST Sicily Palermo Catania m",
        "GEODIST Sicily Palermo Catania km", "GEODIST Sicily Palermo Catania KM",
        "GEODIST Sicily Palermo Catania ft", "GEODIST Sicily Palermo Catania mi",
        "GEODIST Sicily Palermo Catania yd", "GEODIST Sicily Palermo Catania km extra",
        "GEODIST Sicily Palermo nosuch", "GEODIST nokey a b", "GEODIST nokey a b yd",
        "GEODIST Sicily Palermo Palermo", "GEODIST Sicily edge1 edge2 km",
        "SET s x", "GEODIST s a b", EDGES, "GEODIST e a1 a2", "GEODIST e p1 p2 km",
        "GEODIST e a3 a4", "GEODIST e p5 p6 mi", "GEODIST e o o2 ft",
    ])


def test_geohash_and_geopos(server, oracle):
    cmds = SICILY + [EDGES, "GEOHASH Sicily Palermo Catania nosuch", "GEOHASH Sicily",
                     "GEOHASH nokey a b", "GEOPOS Sicily Palermo nosuch Catania", "GEOPOS Sicily",
                     "GEOPOS nokey a", "GEOHASH e a1 a2 p1 p2 p3 p4 o o2",
                     "GEOPOS e a1 a2 a3 a4 p1 p2 p5 p6 o o2", "SET s x", "GEOPOS s a", "GEOHASH s a",
                     # sorted sets not written by GEOADD decode too
                     "ZADD z -1 neg 1e20 big 4503599627370496 top 0 zero 1.5 frac inf pinf -inf ninf",
                     "GEOPOS z neg big top zero frac pinf ninf", "GEOHASH z neg big top zero frac pinf ninf"]
    diff(server, oracle, cmds)
    diff(server, oracle, cmds, resp=3)


SEARCHES = [
    "GEORADIUS Sicily 15 37 200 km",
    "GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC",
    "GEORADIUS Sicily 15 37 200 km DESC WITHDIST",
    "GEORADIUS Sicily 15 37 200 km COUNT 1",
    "GEORADIUS Sicily 15 37 200 km COUNT 1 DESC",
    "GEORADIUS Sicily 15 37 200 km COUNT 2 ANY",
    "GEORADIUS Sicily 15 37 200 km COUNT 1 ANY ASC",
    "GEORADIUS Sicily 15 37 2000000 ft WITHDIST",
    "GEORADIUS Sicily 15 37 100 mi WITHDIST",
    "GEORADIUS Sicily 15 37 0 m",
    "GEORADIUS_RO Sicily 15 37 200 km WITHCOORD",
    "GEORADIUSBYMEMBER Sicily Palermo 300 km WITHDIST ASC",
    "GEORADIUSBYMEMBER_RO Sicily Catania 300 km WITHDIST DESC COUNT 3",
    "GEORADIUSBYMEMBER Sicily nosuch 300 km",
    "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST",
    "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 200 km DESC WITHCOORD WITHHASH",
    "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHDIST",
    "GEOSEARCH Sicily FROMMEMBER Catania BYBOX 600 100 km WITHDIST",
    "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 m",
    "GEOSEARCH Sicily BYRADIUS 200 km FROMLONLAT 15 37 COUNT 2 WITHDIST",
    "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 20000 km COUNT 3 ANY",
    "GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km",
    "GEOSEARCH nokey FROMMEMBER x BYRADIUS 200 km",
    "GEORADIUS nokey 15 37 200 km",
]


def test_searches(server, oracle):
    diff(server, oracle, SICILY + SEARCHES)
    diff(server, oracle, SICILY + SEARCHES, resp=3)


def test_search_errors(server, oracle):
    diff(server, oracle, SICILY + [
        "GEORADIUS Sicily 15 37 -1 km", "GEORADIUS Sicily 15 37 abc km", "GEORADIUS Sicily 15 37 1 yd",
        "GEORADIUS Sicily 200 37 1 km", "GEORADIUS Sicily 15 37 1 km COUNT 0",
        "GEORADIUS Sicily 15 37 1 km COUNT -2", "GEORADIUS Sicily 15 37 1 km COUNT x",
        "GEORADIUS Sicily 15 37 1 km COUNT", "GEORADIUS Sicily 15 37 1 km ANY",
        "GEORADIUS Sicily 15 37 1 km BOGUS", "GEORADIUS Sicily 15 37 1 km STORE",
        "GEORADIUS Sicily 15 37 1 km STORE d WITHDIST", "GEORADIUS_RO Sicily 15 37 1 km STORE d",
        "GEORADIUSBYMEMBER Sicily nosuch 1 km", "GEORADIUSBYMEMBER Sicily Palermo -1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37", "GEOSEARCH Sicily BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 FROMMEMBER Palermo BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km BYBOX 1 1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 km BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 x km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX x 1 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 yd",
        "GEOSEARCH Sicily FROMMEMBER nosuch BYBOX 1 1 km", "GEOSEARCH Sicily FROMLONLAT 15 86 BYBOX 1 1 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STORE d",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STOREDIST",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km ANY",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 1 km WITHDIST",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 1 km WITHCOORD STOREDIST",
        "GEOSEARCHSTORE d Sicily BYRADIUS 1 km", "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37",
        "SET s x", "GEORADIUS s 15 37 1 km", "GEOSEARCH s FROMLONLAT 1 2 BYRADIUS 1 km",
        "GEOSEARCHSTORE d s FROMLONLAT 1 2 BYRADIUS 1 km", "GEORADIUS Sicily 15 37 1 km STORE s",
        "TYPE s",
    ])


def test_store_and_storedist(server, oracle):
    diff(server, oracle, SICILY + [
        "GEORADIUS Sicily 15 37 200 km STORE d1", "ZRANGE d1 0 -1 WITHSCORES", "OBJECT ENCODING d1",
        "GEORADIUS Sicily 15 37 200 km STOREDIST d2 COUNT 1", "ZRANGE d2 0 -1 WITHSCORES",
        "GEORADIUS Sicily 15 37 200 km STORE d3 STOREDIST d4", "EXISTS d3", "ZRANGE d4 0 -1 WITHSCORES",
        "GEORADIUSBYMEMBER Sicily Palermo 500 km STOREDIST d5 DESC", "ZRANGE d5 0 -1 WITHSCORES",
        "GEOSEARCHSTORE d6 Sicily FROMLONLAT 15 37 BYBOX 500 500 km", "ZRANGE d6 0 -1 WITHSCORES",
        "GEOSEARCHSTORE d7 Sicily FROMMEMBER Palermo BYRADIUS 300 mi STOREDIST COUNT 2 DESC",
        "ZRANGE d7 0 -1 WITHSCORES",
        "SET d8 x", "GEORADIUS Sicily 0 0 1 m STORE d8", "EXISTS d8",
        "SET d9 x", "GEOSEARCHSTORE d9 nokey FROMLONLAT 1 1 BYRADIUS 1 km", "EXISTS d9",
        "SET d10 x", "GEORADIUSBYMEMBER nokey m 1 km STORE d10", "EXISTS d10",
        "GEOSEARCHSTORE Sicily Sicily FROMLONLAT 15 37 BYRADIUS 100 km", "ZRANGE Sicily 0 -1 WITHSCORES",
    ])


def test_large_sets_poles_and_antimeridian(server, oracle):
    import random
    rng = random.Random(7)
    cmds = []
    for k, (cx, cy) in (("pole", (10.0, 84.5)), ("anti", (179.8, -30.0)), ("south", (-60.0, -84.8)),
                        ("equ", (0.0, 0.0))):
        args = ["GEOADD", k]
        for i in range(300):
            x = max(-180.0, min(180.0, cx + rng.uniform(-3, 3)))
            if x > 180:
                x -= 360
            y = max(-85.05112878, min(85.05112878, cy + rng.uniform(-1, 1)))
            args += ["%.6f" % x, "%.6f" % y, "m%d" % i]
        cmds.append(args)
        cmds.append(["OBJECT", "ENCODING", k])
        for radius in ("0.5 km", "10 km", "50 km", "150 km", "500 km", "3000 km", "25000 km"):
            r, u = radius.split()
            cmds.append(["GEOSEARCH", k, "FROMLONLAT", str(cx), str(cy), "BYRADIUS", r, u, "ASC", "WITHDIST"])
            cmds.append(["GEOSEARCH", k, "FROMLONLAT", str(cx), str(cy), "BYBOX", r, r, u, "DESC", "COUNT", "7",
                         "WITHCOORD"])
            cmds.append(["GEORADIUSBYMEMBER", k, "m5", r, u, "COUNT", "20", "WITHDIST"])
            cmds.append(["GEORADIUS", k, "-179.99", str(cy), r, u, "COUNT", "5", "ANY"])
            cmds.append(["GEORADIUS", k, "179.99", str(cy), r, u, "ASC"])
    diff(server, oracle, cmds)


def test_geo_keyspace_events(server, oracle):
    cmds = SICILY + ["GEOADD Sicily 13.361389 38.115556 Palermo",
                     "GEORADIUS Sicily 15 37 200 km STORE d1", "GEOSEARCHSTORE d2 Sicily FROMLONLAT 15 37 "
                     "BYRADIUS 200 km", "GEOSEARCHSTORE d2 Sicily FROMLONLAT 0 0 BYRADIUS 1 m",
                     "GEORADIUS nokey 1 1 1 km STORE d1"]
    assert collect_events(server, cmds) == collect_events(oracle, cmds)


def test_command_info_and_getkeys(server, oracle):
    diff(server, oracle, [
        "COMMAND INFO geoadd geodist geohash geopos georadius georadius_ro georadiusbymember "
        "georadiusbymember_ro geosearch geosearchstore",
        "COMMAND GETKEYS GEORADIUS src 1 2 3 km STORE dst",
        "COMMAND GETKEYS GEORADIUS src 1 2 3 km STOREDIST dst",
        "COMMAND GETKEYS GEORADIUSBYMEMBER src m 3 km STORE dst",
        "COMMAND GETKEYS GEOSEARCHSTORE dst src FROMLONLAT 1 2 BYRADIUS 1 km",
    ])


def test_equal_distances_keep_redis_order(server, oracle):
    # Members sharing positions tie on distance: a full sort keeps the scan
    # order (a stable sort), a COUNT cut follows the partial quicksort.
    import random
    rng = random.Random(3)
    spots = [(rng.uniform(9, 11), rng.uniform(44, 46)) for _ in range(8)]
    args = ["GEOADD", "t"]
    for i in range(150):
        x, y = rng.choice(spots)
        args += ["%.6f" % x, "%.6f" % y, "m%03d" % rng.randrange(1000)]
    cmds = [args, ["GEOADD", "s"] + args[2:2 + 3 * 40]]
    for k in ("t", "s"):
        for count in (1, 2, 3, 5, 7, 8, 10, 20, 40, 41, 60, 100, 149, 200):
            for order in ("ASC", "DESC"):
                cmds.append(["GEOSEARCH", k, "FROMLONLAT", "10", "45", "BYRADIUS", "500", "km", order,
                             "COUNT", str(count)])
        cmds.append(["GEOSEARCH", k, "FROMLONLAT", "10", "45", "BYRADIUS", "500", "km", "ASC"])
        cmds.append(["GEOSEARCH", k, "FROMLONLAT", "10", "45", "BYRADIUS", "500", "km", "DESC"])
        cmds.append(["GEORADIUS", k, "10", "45", "500", "km", "COUNT", "3", "ANY"])
    diff(server, oracle, cmds)
