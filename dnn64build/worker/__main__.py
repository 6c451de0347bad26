"""``python -m dnn64build.worker SOCKET LIFELINE_FD [--cache-config FILE ...]``: started by
launch.py for one build; see server.py."""

import argparse
import json

from dnn64build.remote_cache.cached import CacheSession
from dnn64build.remote_cache.http import HttpCache
from dnn64build.worker.server import serve

parser = argparse.ArgumentParser(prog="python -m dnn64build.worker")
parser.add_argument("socket")
parser.add_argument("lifeline", type=int)
parser.add_argument("--cache-config")  # a JSON file: launch.WorkerOptions.write_cache_config
parser.add_argument("--explain", action="store_true")
parser.add_argument("--state-dir", default="")
args = parser.parse_args()
cache = None
if args.cache_config:
    with open(args.cache_config) as f:
        config = json.load(f)
    cache = CacheSession(
        HttpCache(config["url"], read_only=config["read_only"], timeout=config["timeout"],
                  headers=tuple((name, value) for name, value in config["headers"])),
        state_dir=args.state_dir, explain=args.explain,
    )
serve(args.socket, args.lifeline, cache)
