"""A KDTP bot in plain Python that answers the first legal action: the cost of the protocol with
a Python program on the other side (benchmarks/bench_kdtp.py)."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "act":
        answer = {"type": "action", "action": message["legal"][0]}
    elif message["type"] == "hello":
        answer = {"type": "hello", "name": "first-legal-py"}
    elif message["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
