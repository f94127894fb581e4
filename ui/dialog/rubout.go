package dialog

// rubOut is Ctrl-U (everything) or Ctrl-W (the last word: trailing spaces,
// then everything back to a space) on typed text, for the T3 name field.
func rubOut(typed []rune, word bool) []rune {
	if !word {
		return nil
	}
	i := len(typed)
	for i > 0 && typed[i-1] == ' ' {
		i--
	}
	for i > 0 && typed[i-1] != ' ' {
		i--
	}
	return typed[:i]
}
