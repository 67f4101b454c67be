#!/usr/bin/env python3
"""A server of known errors for the fault tests: python3 status-server.py IP
PORT EVERY [healthz] serves /healthz and /payload/<n>k (n KiB of 'x',
Content-Length, keep-alive), and answers every EVERY-th request for a payload
with 500 (EVERY=1: every one after the first 20, which the runner's path
check reads). EVERY=0 is a server that breaks after that check: every
request after the first 20 gets a header promising 10 GiB, then the
connection closes. With healthz, requests for /healthz (Phase 3's low-rate
scenario) are counted and answered so too.
"""
import http.server
import sys
import threading

ip, port, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
healthz = sys.argv[4:] == ["healthz"]
lock = threading.Lock()
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        global count
        status, body = 404, b""
        counted = healthz
        if self.path == "/healthz":
            status, body = 200, b"ok\n"
        elif self.path.startswith("/payload/") and self.path.endswith("k"):
            status, body = 200, b"x" * (1024 * int(self.path[len("/payload/"):-1]))
            counted = True
        if counted and status == 200:
            with lock:
                count += 1
                n = count
            if every == 0 and n > 20:
                self.send_response(200)
                self.send_header("Content-Length", str(10 << 30))
                self.end_headers()
                self.wfile.flush()
                self.close_connection = True
                return
            if (every == 1 and n > 20) or (every > 1 and n % every == 0):
                status, body = 500, b"error\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    # socketserver's default backlog of 5 drops the SYNs of wrk's 16
    # connections opening at once (retransmits, timeouts, few requests).
    request_queue_size = 128


Server((ip, port), Handler).serve_forever()
