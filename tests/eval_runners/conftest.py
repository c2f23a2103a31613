import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from er_chat_server import ChatServer  # noqa: E402


@pytest.fixture
def chat_server():
    servers = []

    def start(script=None):
        srv = ChatServer(script).start()
        servers.append(srv)
        return srv

    yield start
    for s in servers:
        s.stop()
