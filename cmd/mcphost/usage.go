package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// strictUsage makes every mistake on the command line a usage error (exit
// 2), for every command of the tree, in one place: an unknown subcommand,
// a help topic that does not exist, and arguments a command's Args
// validator rejects. Where a near name exists the error says "did you
// mean". A command that only groups subcommands, run alone, is a usage
// error naming them. It must run after every command is added.
func strictUsage(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(flagError)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.SilenceUsage, c.SilenceErrors = true, true
		c.SuggestionsMinimumDistance = 2 // "toolz", "tial", "stauts"
		check := c.Args
		switch {
		case c.Name() == "help" && c.HasParent():
			check = helpTopicArgs
		case c.HasSubCommands():
			if c.Run == nil && c.RunE == nil {
				c.RunE = needsSubcommand
			}
			check = subcommandArgs(check)
		}
		c.Args = usageArgs(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// usageArgs runs check and marks what it rejects as a usage error, with
// the command's usage line. A nil check accepts any arguments.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if check == nil {
			return nil
		}
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		var ce *codeError
		if errors.As(err, &ce) {
			return err // already says what is wrong
		}
		msg := err.Error()
		if !cmd.HasSubCommands() && len(args) > 0 && check(cmd, nil) == nil && strings.HasPrefix(msg, "unknown command") {
			// cobra.NoArgs speaks of commands; this command takes no arguments.
			msg = fmt.Sprintf("takes no arguments, got %q", args[0])
		}
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return usageError(fmt.Errorf("%s: %s\nusage: %s (see %s --help)", name, msg, cmd.UseLine(), cmd.CommandPath()))
	}
}

// subcommandArgs rejects an argument to a command with subcommands: an
// argument that reaches it names no subcommand. Without arguments the
// command's own check applies.
func subcommandArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if check == nil {
			check = cobra.NoArgs
		}
		if len(args) == 0 || check(cmd, args) == nil {
			// No word, or words the command itself takes (mcphost
			// --resume ID): not a subcommand.
			return check(cmd, args)
		}
		return unknownCommand(cmd, args[0])
	}
}

// helpTopicArgs rejects `help TOPIC` for a topic that is not a command.
func helpTopicArgs(cmd *cobra.Command, args []string) error {
	found, rest, err := cmd.Root().Find(args)
	if err != nil || found == nil {
		return usageError(fmt.Errorf("no help topic %q (see %s --help)", strings.Join(args, " "), cmd.Root().Name()))
	}
	if len(rest) > 0 {
		return unknownCommand(found, rest[0])
	}
	return nil
}

// flagError is the usage error for a flag mistake, with the near flag
// names for an unknown one.
func flagError(cmd *cobra.Command, err error) error {
	if !cmd.HasParent() && promptFlag(err.Error()) {
		// Other terminal hosts take a headless prompt as "-p" on their
		// top command; mcphost's is a command of its own.
		return usageError(fmt.Errorf("%v: a prompt without the chat is mcphost run -p PROMPT (see mcphost run --help)", err))
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return usageError(err)
	}
	var have []string
	add := func(f *pflag.Flag) {
		if !slices.Contains(have, f.Name) {
			have = append(have, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	msg := err.Error()
	if near := nearNames(name, have); len(near) > 0 {
		msg += "; did you mean " + orList(quoteAll(prefixAll("--", near))) + "?"
	}
	return usageError(fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath()))
}

// needsSubcommand is the usage error of a group command run alone.
func needsSubcommand(cmd *cobra.Command, _ []string) error {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	return usageError(fmt.Errorf("%s needs a command: %s (see %s --help)", name, orList(names), cmd.CommandPath()))
}

// unknownCommand is the usage error for name, not a subcommand of cmd,
// with the subcommands whose names are near it.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %s", name, cmd.CommandPath())
	if near := cmd.SuggestionsFor(name); len(near) > 0 {
		msg += "; did you mean " + orList(quoteAll(near)) + "?"
	}
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return usageError(fmt.Errorf("%s\n%s has: %s (see %s --help)", msg, cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath()))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// orList joins ["a", "b", "c"] as "a, b or c".
func orList(ss []string) string {
	if len(ss) <= 1 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " or " + ss[len(ss)-1]
}

// nearNames are the names in have within two edits of name (case
// ignored), nearest first: what a misspelt name probably meant.
func nearNames(name string, have []string) []string {
	type near struct {
		name string
		d    int
	}
	var ns []near
	for _, h := range have {
		if d := config.EditDistance(strings.ToLower(name), strings.ToLower(h)); d <= 2 && d < len([]rune(h)) {
			ns = append(ns, near{h, d})
		}
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].d < ns[j].d })
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.name
	}
	return out
}

// promptFlag reports whether a flag error is about -p, --prompt or --print
// given to mcphost itself rather than to run.
func promptFlag(msg string) bool {
	return strings.HasPrefix(msg, "unknown shorthand flag: 'p'") ||
		msg == "unknown flag: --prompt" || msg == "unknown flag: --print"
}
