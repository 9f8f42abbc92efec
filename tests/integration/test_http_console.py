"""The web console (http-console yes, issue 37), in a real browser: headless
Chromium from Debian driven by python3-selenium (chromium-driver).  The
console loads with HTTP Basic credentials (the server needs a password),
runs a command from its command line, browses a key of each type, sees its
charts take new samples, lists the slow log and shows a published message
in its pub/sub watch.  Screenshots go to build/test-artifacts/console/
(CAIRN_TEST_ARTIFACTS overrides the directory).

Without a browser: GET / serves the page only with http-console on (else
Webdis's 403), asks for credentials (401 with WWW-Authenticate, none for a
script's X-Requested-With request) when ACL needs them, answers 304 to its
ETag, and the page loads nothing from elsewhere."""
import base64
import os
import re
import shutil

import pytest
import redis

from conftest import Server, cairn_bin, free_port
from webdishelp import request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.environ.get("CAIRN_TEST_ARTIFACTS", os.path.join(ROOT, "build", "test-artifacts"))
PASSWORD = "s3cret"
WAIT = 20  # seconds any one browser condition may take


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


@pytest.fixture
def console():
    hport = free_port()
    s = Server(cairn_bin(), {"http_port": hport, "http_console": "yes", "requirepass": PASSWORD},
               name="console")
    s.http = hport
    yield s
    rep = s.stop()
    assert not rep, rep[-8000:]
    s.cleanup()


def test_page_needs_console_on(start_server):
    hport = free_port()
    s = start_server(http_port=hport)
    r = request(hport, "GET", "/")
    assert r.status == 403  # Webdis's answer to an empty command
    c = s.client()
    c.config_set("http-console", "yes")
    r = request(hport, "GET", "/")
    assert r.status == 200
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    assert b"<title>Cairn console</title>" in r.body
    etag = r.header("ETag")
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    assert request(hport, "GET", "/", headers=[("If-None-Match", etag)]).status == 304
    assert request(hport, "GET", "/?x=1").status == 200
    # Self-contained: no script, style or image from anywhere else.
    assert not re.search(rb'(src|href)\s*=\s*["\']?(https?:)?//', r.body)
    assert b"<script src" not in r.body and b"<link" not in r.body
    # Other paths are still commands.
    assert request(hport, "GET", "/PING").body == b'{"PING":[true,"PONG"]}'
    c.config_set("http-console", "no")
    assert request(hport, "GET", "/").status == 403


def test_page_needs_credentials(console):
    hport = console.http
    r = request(hport, "GET", "/")
    assert r.status == 401
    assert r.header("WWW-Authenticate") == 'Basic realm="cairn"'
    # A script's request: 401 without a scheme, so the browser does not prompt.
    r = request(hport, "POST", "/", b"PING.raw", headers=[("X-Requested-With", "x")])
    assert r.status == 401 and r.header("WWW-Authenticate") is None
    assert request(hport, "GET", "/", headers=[("Authorization", basic("default", "wrong"))]).status == 401
    r = request(hport, "GET", "/", headers=[("Authorization", basic("default", PASSWORD))])
    assert r.status == 200 and b"Cairn console" in r.body
    # A user without PING's rights still gets the page (it can log in).
    c = redis.Redis(port=console.port, password=PASSWORD, socket_timeout=10)
    c.execute_command("ACL", "SETUSER", "viewer", "on", ">pw", "+get", "~*")
    r = request(hport, "GET", "/", headers=[("Authorization", basic("viewer", "pw"))])
    assert r.status == 200
    assert request(hport, "GET", "/", headers=[("Authorization", basic("viewer", "bad"))]).status == 401


def _driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("python3-selenium not installed (scripts/deps.sh test installs it)")
    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        pytest.skip("chromium / chromium-driver not installed (scripts/deps.sh test installs them)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--window-size=1280,860", "--no-first-run", "--disable-extensions"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(chromedriver), options=opts)
    d.set_page_load_timeout(WAIT)
    d.set_script_timeout(WAIT)
    return d


def test_console_in_browser(console):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    out = os.path.join(ARTIFACTS, "console")
    os.makedirs(out, exist_ok=True)
    c = redis.Redis(port=console.port, password=PASSWORD, socket_timeout=10, decode_responses=True)
    c.set("t:string", "hello string")
    c.rpush("t:list", "l-one", "l-two", "l-three")
    c.hset("t:hash", mapping={"field1": "hv1", "field2": "hv2"})
    c.sadd("t:set", "s-alpha", "s-beta")
    c.zadd("t:zset", {"z-low": 1.5, "z-high": 42})
    c.xadd("t:stream", {"sensor": "s-17", "temp": "21.5"}, id="1-1")
    c.expire("t:hash", 1000)
    c.config_set("slowlog-log-slower-than", 0)

    d = _driver()
    try:
        wait = WebDriverWait(d, WAIT, poll_frequency=0.1)
        # The credentials as a browser sends them after its prompt.
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                          {"headers": {"Authorization": basic("default", PASSWORD)}})
        d.get("http://127.0.0.1:%d/" % console.http)
        assert d.title == "Cairn console"
        wait.until(lambda d: "user: default" in d.find_element(By.ID, "user").text)
        wait.until(lambda d: d.find_element(By.ID, "server-info").text.startswith("Cairn"))

        # The command line: a write, a read, an error, history.
        cli = d.find_element(By.ID, "cli-in")
        cli.send_keys('SET greeting "hello from the browser"' + Keys.ENTER)
        wait.until(lambda d: c.get("greeting") == "hello from the browser")
        cli.send_keys("GET greeting" + Keys.ENTER)
        cli.send_keys("LRANGE t:list 0 -1" + Keys.ENTER)
        cli.send_keys("NOSUCHCOMMAND" + Keys.ENTER)
        outp = d.find_element(By.ID, "cli-out")
        wait.until(lambda d: "unknown command" in outp.text)
        text = outp.text
        assert 'OK' in text
        assert '"hello from the browser"' in text
        assert '1) "l-one"\n2) "l-two"\n3) "l-three"' in text
        assert "(error) ERR unknown command 'NOSUCHCOMMAND'" in text
        cli.send_keys(Keys.ARROW_UP)
        assert cli.get_attribute("value") == "NOSUCHCOMMAND"
        cli.send_keys(Keys.ARROW_UP)
        assert cli.get_attribute("value") == "LRANGE t:list 0 -1"
        d.save_screenshot(os.path.join(out, "1-command-line.png"))

        # The key browser: SCAN with a pattern, then each type's viewer.
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=keys]").click()
        pat = d.find_element(By.ID, "scan-pattern")
        pat.clear()
        pat.send_keys("t:*" + Keys.ENTER)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#key-list li")) == 6)
        expect = {"t:string": ("string", ["hello string"]),
                  "t:list": ("list", ["l-one", "l-three"]),
                  "t:hash": ("hash", ["field1", "hv2"]),
                  "t:set": ("set", ["s-alpha", "s-beta"]),
                  "t:zset": ("zset", ["z-high", "42"]),
                  "t:stream": ("stream", ["1-1", "sensor=s-17"])}
        for key, (typ, words) in expect.items():
            li = d.find_element(By.CSS_SELECTOR, '#key-list li[data-key="%s"]' % key)
            wait.until(lambda d: li.find_element(By.CSS_SELECTOR, ".badge").text == typ)
            li.click()

            def shown(d):
                v = d.find_elements(By.ID, "key-value")
                return v and v[0].get_attribute("data-type") == typ and \
                    d.find_element(By.CSS_SELECTOR, "#key-view h2").text == key
            wait.until(shown)
            view = d.find_element(By.ID, "key-view").text
            for w in words:
                assert w in view, (key, w, view)
            assert "type " + typ in view
            if key == "t:hash":
                ttl = int(re.search(r"TTL (\d+) s", view).group(1))
                assert 0 < ttl <= 1000
                d.save_screenshot(os.path.join(out, "2-key-browser.png"))
            else:
                assert "TTL none" in view
            assert re.search(r"memory \d+", view), view

        # The charts: each poll adds a sample.
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=stats]").click()
        ops = d.find_element(By.ID, "c-ops")
        wait.until(lambda d: int(ops.get_attribute("data-points") or 0) >= 2)
        first = int(ops.get_attribute("data-points"))
        for _ in range(50):  # some load for the charts
            c.incr("counter")
        wait.until(lambda d: int(ops.get_attribute("data-points")) > first)
        assert re.fullmatch(r"\d+", d.find_element(By.ID, "v-ops").text)
        assert re.search(r"\d", d.find_element(By.ID, "v-mem").text)
        assert int(d.find_element(By.ID, "v-clients").text) >= 2
        # redis-py's INCR is INCRBY: 50 calls, three percentiles, histogram buckets.
        wait.until(lambda d: "incrby" in d.find_element(By.ID, "lat-table").text)
        # Read in one script: the page rebuilds the table every second.
        rows = d.execute_script("return Array.from(document.querySelectorAll('#lat-table tbody tr'),"
                                " r => Array.from(r.cells, c => c.textContent).join(' ').trim())")
        incr = [r for r in rows if r.startswith("incrby ")]
        m = incr and re.match(r"incrby (\d+) [\d.]+ [\d.]+ [\d.]+ (\d+:\d+ ?)+$", incr[0])
        assert m, rows
        assert int(m.group(1)) >= 50
        d.save_screenshot(os.path.join(out, "3-charts.png"))

        # The slow log (every command is slow at threshold 0).
        c.set("slow-marker", "x")
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=slowlog]").click()
        wait.until(lambda d: "SET slow-marker x" in d.find_element(By.ID, "slow-table").text)
        assert re.search(r"\d+ entries", d.find_element(By.ID, "slow-len").text)
        d.save_screenshot(os.path.join(out, "4-slowlog.png"))

        # Pub/sub watch: a pattern subscription over Server-Sent Events.
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=pubsub]").click()
        d.find_element(By.ID, "sub-channel").send_keys("news.*" + Keys.ENTER)
        wait.until(lambda d: d.find_element(By.ID, "sub-state").text == "watching news.*")
        assert c.publish("news.tech", "a message for the browser") == 1
        wait.until(lambda d: "a message for the browser" in d.find_element(By.ID, "sub-table").text)
        row = d.find_element(By.CSS_SELECTOR, "#sub-table tbody tr").text
        assert "news.* news.tech a message for the browser" in row
        # Publishing from the page reaches a RESP subscriber.
        ps = c.pubsub()
        ps.subscribe("from-page")
        assert ps.get_message(timeout=5)["type"] == "subscribe"
        d.find_element(By.ID, "pub-channel").send_keys("from-page")
        d.find_element(By.ID, "pub-message").send_keys("hi" + Keys.ENTER)
        msg = None
        for _ in range(100):
            msg = ps.get_message(timeout=0.2)
            if msg:
                break
        assert msg and msg["data"] == "hi"
        ps.close()
        d.save_screenshot(os.path.join(out, "5-pubsub.png"))
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        d.quit()


def test_console_login_dialog(console):
    """The page's own requests without credentials (a password changed
    under it) get a plain 401 (no browser prompt: X-Requested-With) and open
    its login form; wrong credentials are refused there, right ones go on
    every request from then on (pub/sub stream included)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    out = os.path.join(ARTIFACTS, "console")
    os.makedirs(out, exist_ok=True)
    c = redis.Redis(port=console.port, password=PASSWORD, socket_timeout=10, decode_responses=True)
    c.execute_command("ACL", "SETUSER", "ops", "on", ">ops-pw", "allcommands", "allkeys", "allchannels")
    d = _driver()
    try:
        wait = WebDriverWait(d, WAIT, poll_frequency=0.1)
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                          {"headers": {"Authorization": basic("default", PASSWORD)}})
        d.get("http://127.0.0.1:%d/" % console.http)
        wait.until(lambda d: "user: default" in d.find_element(By.ID, "user").text)
        # From now on the browser adds nothing: the page has no credentials.
        d.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
        cli = d.find_element(By.ID, "cli-in")
        cli.send_keys("SET who default" + Keys.ENTER)
        wait.until(lambda d: d.find_element(By.ID, "login").get_attribute("open") is not None)
        assert c.get("who") is None
        d.save_screenshot(os.path.join(out, "6-login.png"))
        user = d.find_element(By.ID, "login-user")
        user.clear()
        user.send_keys("ops")
        d.find_element(By.ID, "login-pass").send_keys("wrong" + Keys.ENTER)
        wait.until(lambda d: d.find_element(By.ID, "login-err").text == "wrong user or password")
        pw = d.find_element(By.ID, "login-pass")
        pw.clear()
        pw.send_keys("ops-pw" + Keys.ENTER)
        wait.until(lambda d: d.find_element(By.ID, "login").get_attribute("open") is None)
        wait.until(lambda d: "user: ops" in d.find_element(By.ID, "user").text)
        cli.send_keys("SET who ops" + Keys.ENTER)
        wait.until(lambda d: c.get("who") == "ops")
        # The pub/sub stream carries the form's credentials too.
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=pubsub]").click()
        d.find_element(By.ID, "sub-channel").send_keys("alerts" + Keys.ENTER)
        wait.until(lambda d: d.find_element(By.ID, "sub-state").text == "watching alerts")
        assert c.publish("alerts", "disk full") == 1
        wait.until(lambda d: "disk full" in d.find_element(By.ID, "sub-table").text)
        clients = c.client_list()
        assert any(cl["user"] == "ops" for cl in clients), clients
    finally:
        d.quit()
