//go:build !darwin && !windows

package config

const managedPath = "/etc/mcphost/managed.json"
