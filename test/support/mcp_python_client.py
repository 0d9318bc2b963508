"""A native MCP host written with the Python MCP SDK (the 1.x line or 2.x), driven by
test/e2e/mcp-python.test.ts.

It signs in the way a desktop host does, with the SDK's own OAuth client provider: discovery,
dynamic registration, PKCE, a loopback callback it listens on itself, the code exchange. The
browser step is the test's: the authorization URL goes to stdout as
{"event": "authorize", "url": ...}, the test approves in Chromium, and the browser lands on this
process's callback. Then it lists the tools, makes each call given in argv (a JSON list of
[name, arguments]) and prints {"event": "done", "protocolVersion", "tools", "calls"}, each result
as the JSON the server sent (camelCase).

Usage: python mcp_python_client.py <mcp url> <calls json> [auto|legacy]
"""

import asyncio
import json
import sys
from importlib.metadata import version
from urllib.parse import parse_qs, urlparse

from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

SDK_VERSION = version("mcp")
SDK_MAJOR = int(SDK_VERSION.split(".")[0])


def emit(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def wire(model: object) -> object:
    """A result as it travelled: the protocol's field names, unset fields left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[attr-defined]


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class LoopbackCallback:
    """The redirect URI a native app listens on (RFC 8252 §7.3): one request, its query kept."""

    def __init__(self) -> None:
        self.received: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.url = ""

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/callback"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readline()).decode()
        target = request_line.split(" ")[1] if " " in request_line else "/"
        query = {name: values[0] for name, values in parse_qs(urlparse(target).query).items()}
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
        writer.write(b"You can close this window.")
        await writer.drain()
        writer.close()
        if urlparse(target).path == "/callback" and not self.received.done():
            self.received.set_result(query)


async def run(url: str, calls: list[tuple[str, dict[str, object]]], mode: str) -> None:
    callback = LoopbackCallback()
    await callback.start()

    async def redirect_handler(authorization_url: str) -> None:
        emit("authorize", url=authorization_url, callback=callback.url)

    async def callback_handler():  # type: ignore[no-untyped-def]
        query = await asyncio.wait_for(callback.received, timeout=90)
        if "code" not in query:
            raise RuntimeError(f"The authorization server sent back no code: {query}")
        if SDK_MAJOR >= 2:
            from mcp.client.auth import AuthorizationCodeResult

            return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
        return query["code"], query.get("state")

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=f"Python MCP SDK {SDK_VERSION}",
            redirect_uris=[callback.url],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    if SDK_MAJOR >= 2:
        import httpx2
        from mcp import Client

        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
        ):
            protocol_version = client.protocol_version
            listed = await client.list_tools()
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
    else:
        import httpx
        from mcp import ClientSession

        async with (
            httpx.AsyncClient(auth=provider, timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            protocol_version = (await session.initialize()).protocolVersion
            listed = await session.list_tools()
            results = [await session.call_tool(name, arguments) for name, arguments in calls]

    callback.server.close()
    emit(
        "done",
        sdkVersion=SDK_VERSION,
        protocolVersion=protocol_version,
        tools=[wire(tool) for tool in listed.tools],
        calls=[wire(result) for result in results],
    )


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "auto"))
