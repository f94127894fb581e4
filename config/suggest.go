package config

import "strings"

// suggest returns the candidate closest to key, ignoring case, if it is
// close enough to be a likely typo; otherwise "". Ties go to the earlier
// candidate.
func suggest(key string, candidates []string) string {
	k := strings.ToLower(key)
	limit := 1
	switch n := len([]rune(k)); {
	case n > 8:
		limit = 3
	case n > 4:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := EditDistance(k, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// EditDistance counts the insertions, deletions, substitutions and swaps of
// adjacent code points that turn a into b (optimal string alignment). It is
// how every "did you mean" of mcphost measures nearness.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: two back (for swaps), one back, and the current one.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
