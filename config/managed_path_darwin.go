package config

const managedPath = "/Library/Application Support/mcphost/managed.json"
