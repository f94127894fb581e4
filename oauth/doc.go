// Package oauth lets mcphost reach HTTP MCP servers that require OAuth.
//
// It is the glue between the host and go-sdk's auth package: a [Handler]
// (one per server) implements auth.OAuthHandler for the streamable HTTP
// transport, [Login] runs the authorization code flow once with a person at
// the keyboard, and a [Store] keeps the resulting tokens on disk.
//
// The SDK performs discovery (protected resource metadata, then authorization
// server metadata), client registration (pre-registered, dynamic, or by a
// client ID metadata document), PKCE with S256, the resource parameter
// (RFC 8707) and the issuer check (RFC 9207). This package adds what a
// terminal host needs around it:
//
//   - the authorization URL is checked (http or https only) before it is
//     shown or opened, and it is opened without a shell;
//   - the code comes back on a loopback redirect that accepts one request
//     with the expected state and then closes;
//   - OAuth requests (metadata, registration, token) cannot reach link-local
//     or private addresses unless the MCP server itself lives there, proxy
//     or no proxy: every target host is resolved and each of its addresses
//     checked before the request is sent directly or handed to a proxy, and
//     direct connections are checked again as they are dialled;
//   - no registration or token request leaves before the authorization
//     server's metadata was fetched and its endpoints checked, and a refusal
//     names the URL and the reason;
//   - tokens are stored one file per server, mode 0600 in a 0700 directory,
//     replaced atomically, and bound to the origin and resource they were
//     issued for: a token is never offered to a server at another origin;
//   - expired tokens are refreshed, with the resource parameter, under a
//     lock shared by every mcphost process;
//   - when no one can log in (headless runs), a server that needs a login
//     fails with a [*LoginRequiredError] instead of waiting for a browser.
//
// Tokens never appear in errors, logs or [Status].
package oauth
