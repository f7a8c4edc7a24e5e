"""A small headless-Chromium driver for tests, standard library only.

It speaks the Chrome DevTools Protocol over `--remote-debugging-pipe`: Chromium reads commands
from file descriptor 3 and writes replies and events to file descriptor 4, each message one JSON
text followed by a NUL byte. A pipe needs no port, no HTTP handshake and no websocket framing,
and only the process that started the browser can talk to it.

    with Browser() as browser:
        page = browser.open(Path("report.html"))
        page.wait_for("document.documentElement.dataset.chartsDrawn")
        print(page.evaluate("document.title"), page.network_requests, page.console_errors())
        png = page.screenshot()

The browser runs in its own process group with a fresh temporary profile; `close()` (also on
an exception or a timeout) kills that group by the browser's PID and removes the profile.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import struct
import tempfile
import time
import zlib
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "chromium")


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width: int = 1280, height: int = 900, timeout: float = 30.0):
        self.timeout = timeout
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="healthetl-chromium-")
        self.pid: int | None = None
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict] = []  # events not yet handed to a page
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        args = [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",  # tests run as root in a container, where the sandbox cannot start
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--disable-extensions",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--font-render-hinting=none",
            "about:blank",
        ]
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            executable = shutil.which(CHROMIUM)
            if executable is None:
                raise BrowserError(f"{CHROMIUM} not found (apt-get install chromium)")
            self.pid = os.posix_spawn(
                executable,
                args,
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, devnull, 0),
                    (os.POSIX_SPAWN_DUP2, devnull, 1),
                    (os.POSIX_SPAWN_DUP2, devnull, 2),
                    (os.POSIX_SPAWN_DUP2, to_browser_r, 3),
                    (os.POSIX_SPAWN_DUP2, from_browser_w, 4),
                ],
                setpgroup=0,  # its own process group, so close() reaches every child it starts
            )
        except BaseException:
            os.close(self._to_browser)
            os.close(self._from_browser)
            self._to_browser = self._from_browser = None
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        finally:
            os.close(devnull)
            os.close(to_browser_r)
            os.close(from_browser_w)
        try:
            self.version = self.call("Browser.getVersion")
        except BaseException:
            self.close()
            raise

    # -- the pipe

    def _send(self, method: str, params: dict | None, session: str | None) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self._to_browser, data)
            data = data[written:]
        return self._next_id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("timed out waiting for the browser")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed the DevTools pipe (did it crash?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float | None = None):
        """Sends a command and returns its result; events that arrive meanwhile are kept."""
        deadline = time.monotonic() + (timeout or self.timeout)
        wanted = self._send(method, params, session)
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def pump(self, seconds: float) -> None:
        """Reads events for a while (nothing is sent)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._events.append(self._receive(deadline))
        except BrowserError as error:
            if "timed out" not in str(error):
                raise

    def take_events(self, session: str) -> list[dict]:
        mine = [e for e in self._events if e.get("sessionId") == session]
        self._events = [e for e in self._events if e.get("sessionId") != session]
        return mine

    # -- pages

    def open(self, path_or_url: Path | str, width: int | None = None, height: int | None = None,
             color_scheme: str | None = None) -> "Page":
        url = path_or_url.resolve().as_uri() if isinstance(path_or_url, Path) else path_or_url
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session, url, width or self.width, height or self.height)
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=session)
        page.set_viewport(page.width, page.height)
        if color_scheme:
            page.emulate(color_scheme=color_scheme)
        result = self.call("Page.navigate", {"url": url}, session=session)
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")
        page.wait_for("document.readyState === 'complete'")
        return page

    def close(self) -> None:
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None
        for fd in ("_to_browser", "_from_browser"):
            if getattr(self, fd, None) is not None:
                os.close(getattr(self, fd))
                setattr(self, fd, None)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, target: str, session: str, url: str, width: int, height: int):
        self.browser, self.target, self.session, self.url = browser, target, session, url
        self.width, self.height = width, height
        self.network_requests: list[str] = []  # every URL the page asked for, its own included
        self.console: list[tuple[str, str]] = []  # (level, text) of console calls and log entries
        self.exceptions: list[str] = []

    def _collect(self) -> None:
        for event in self.browser.take_events(self.session):
            method, params = event["method"], event.get("params", {})
            if method == "Network.requestWillBeSent":
                self.network_requests.append(params["request"]["url"])
            elif method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                self.console.append((params.get("type", "log"), text))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                description = details.get("exception", {}).get("description") or details.get("text", "")
                self.exceptions.append(description)
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                self.console.append((entry.get("level", "info"), f"[{entry.get('source')}] {entry.get('text', '')}"))

    def call(self, method: str, params: dict | None = None, timeout: float | None = None):
        result = self.browser.call(method, params, session=self.session, timeout=timeout)
        self._collect()
        return result

    def evaluate(self, expression: str, timeout: float | None = None):
        """The value of a JS expression (JSON-serialisable results only); page errors raise."""
        result = self.call("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True,
        }, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"{expression[:80]}: {details.get('exception', {}).get('description') or details.get('text')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float | None = None, interval: float = 0.05):
        """Polls until the expression is truthy and returns its value; raises after the timeout."""
        deadline = time.monotonic() + (timeout or self.browser.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression}")
            self.browser.pump(interval)
            self._collect()

    def settle(self, seconds: float = 0.2) -> None:
        """Lets late events (a failed request, a console message) arrive."""
        self.browser.pump(seconds)
        self._collect()

    def console_errors(self) -> list[str]:
        self._collect()
        return [text for level, text in self.console if level in ("error", "assert")] + self.exceptions

    def foreign_requests(self) -> list[str]:
        """Requests for anything but the page's own file."""
        self._collect()
        return [url for url in self.network_requests if url.split("#")[0] != self.url]

    def emulate(self, color_scheme: str | None = None, media: str = "") -> None:
        features = [{"name": "prefers-color-scheme", "value": color_scheme}] if color_scheme else []
        self.call("Emulation.setEmulatedMedia", {"media": media, "features": features})

    def screenshot(self, full_page: bool = False, scale: float = 1.0, clip_height: int | None = None) -> bytes:
        """A PNG of the viewport, of its top `clip_height` CSS pixels, or of the whole page.

        For more than the viewport the viewport itself is made that tall for the capture:
        `captureBeyondViewport` leaves canvases outside the viewport blank in headless Chromium."""
        width, height = self.width, self.height
        if full_page or (clip_height and clip_height > height):
            metrics = self.call("Page.getLayoutMetrics")
            content = (metrics.get("cssContentSize") or metrics["contentSize"])["height"]
            height = int(min(content, clip_height or content))
        elif clip_height:
            height = clip_height
        # Only the tab in front produces frames; a capture of a background tab never returns.
        self.call("Page.bringToFront")
        resized = height != self.height
        if resized:
            self.set_viewport(width, height, keep=False)
            self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        try:
            # The clip is in page coordinates: start it where the page is scrolled to (a page as
            # tall as its content cannot scroll, so that is the top).
            viewport = self.call("Page.getLayoutMetrics").get("cssVisualViewport", {})
            x, y = (0, 0) if resized else (viewport.get("pageX", 0), viewport.get("pageY", 0))
            params = {"format": "png", "clip": {"x": x, "y": y, "width": width, "height": height, "scale": scale}}
            return base64.b64decode(self.call("Page.captureScreenshot", params, timeout=60)["data"])
        finally:
            if resized:
                self.set_viewport(self.width, self.height)

    def close(self) -> None:
        self.browser.call("Target.closeTarget", {"targetId": self.target})

    def set_viewport(self, width: int, height: int, keep: bool = True) -> None:
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        if keep:
            self.width, self.height = width, height

    def pdf(self) -> bytes:
        self.call("Page.bringToFront")
        return base64.b64decode(self.call("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}, timeout=60)["data"])


# ---------------------------------------------------------------------------------------------
# PNG inspection, to tell a real screenshot from a blank one


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, raw unfiltered rows without filter bytes) of an 8-bit
    greyscale, RGB or RGBA PNG without interlacing (what Chromium writes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, []
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or colour not in (0, 2, 6):
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
            channels = {0: 1, 2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    out = bytearray(stride * height)
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif f != 0:
            raise ValueError(f"bad PNG filter {f}")
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return width, height, channels, bytes(out)


def png_summary(data: bytes) -> dict:
    """Size, distinct colours, the most common colour (the background) and the share of pixels
    that differ from it."""
    width, height, channels, pixels = decode_png(data)
    counts: dict[bytes, int] = {}
    for i in range(0, len(pixels), channels):
        key = pixels[i:i + 3] if channels >= 3 else pixels[i:i + 1] * 3
        counts[key] = counts.get(key, 0) + 1
    background, most = max(counts.items(), key=lambda kv: kv[1])
    total = width * height
    return {
        "width": width,
        "height": height,
        "colours": len(counts),
        "background": tuple(background),
        "foreground_share": (total - most) / total,
    }
