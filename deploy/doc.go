// Package deploy holds the example deployments of mcphost serve --http for
// a team (a docker compose file and Kubernetes manifests, see
// docs/deploy.md) and the test that keeps them well-formed and in step
// with the code: the probes' paths are the ones serve answers, the grace
// periods outlast the drain. It has no code of its own.
package deploy
