package approver

const harnessEnv = "MCPHOST_APPROVER_HARNESS"

func harness(dir string) int { return 2 }
