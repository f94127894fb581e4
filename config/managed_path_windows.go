package config

const managedPath = `C:\ProgramData\mcphost\managed.json`
