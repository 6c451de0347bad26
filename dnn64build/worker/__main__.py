"""``python -m dnn64build.worker SOCKET LIFELINE_FD [--remote-cache URL ...]``: started by
launch.py for one build; see server.py."""

import argparse

from dnn64build.remote_cache.cached import CacheSession
from dnn64build.remote_cache.http import HttpCache
from dnn64build.worker.server import serve

parser = argparse.ArgumentParser(prog="python -m dnn64build.worker")
parser.add_argument("socket")
parser.add_argument("lifeline", type=int)
parser.add_argument("--remote-cache")
parser.add_argument("--read-only", action="store_true")
parser.add_argument("--timeout", type=float, default=10.0)
parser.add_argument("--explain", action="store_true")
parser.add_argument("--state-dir", default="")
args = parser.parse_args()
cache = CacheSession(
    HttpCache(args.remote_cache, read_only=args.read_only, timeout=args.timeout),
    state_dir=args.state_dir, explain=args.explain,
) if args.remote_cache else None
serve(args.socket, args.lifeline, cache)
