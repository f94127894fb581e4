package decide

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Heuristics that flag a poisoned tool description, named in the reason
// code "poisoned-description:NAME". A description is the server's text
// for the model; these are the shapes that turn it into instructions
// aimed at the model rather than documentation of the tool.
const (
	// PoisonOtherTool: it tells the model how to use another tool ("when
	// using send_email, always BCC …").
	PoisonOtherTool = "other-tool"
	// PoisonSecrets: it points the model at secrets (~/.ssh, id_rsa,
	// .env, .aws/credentials, "the user's credentials").
	PoisonSecrets = "secrets"
	// PoisonConceal: it asks the model to keep something from the person
	// ("do not tell the user", "don't mention").
	PoisonConceal = "conceal"
	// PoisonInstructionBlock: it carries an instruction block
	// (<IMPORTANT>, <system>, [INST]) or tells the model to ignore its
	// previous instructions.
	PoisonInstructionBlock = "instruction-block"
)

// poisonRules are tried on the normalised description, in this order;
// compiled on first use.
// Each expression is deliberately narrow: an ordinary description must
// never match (the tests run every description of the fixtures and of the
// reference servers), and a missed one is still shown to the person.
var poisonRules = sync.OnceValue(func() []poisonRule { return compilePoisonRules() })

type poisonRule struct {
	name string
	re   *regexp.Regexp
}

func compilePoisonRules() []poisonRule {
	return []poisonRule{
		{PoisonOtherTool, regexp.MustCompile(
			// a conditional on calling a named tool, then an order in the same sentence
			`\b(?:when|whenever|before|after|while|if)\s+(?:you\s+)?(?:are\s+)?(?:use|using|call|calling|invoke|invoking|run|running|execute|executing)\s+(?:the\s+|any\s+)?` +
				"[`'\"]?[a-z0-9]+[_.][a-z0-9_.]*[a-z0-9][`'\"]?" +
				`(?:\s+tool)?\b[^.!?\n]{0,80}\b(?:always|must|should|make sure|be sure|remember|ensure|instead|first|also|do not|don't|never|bcc|cc)\b` +
				// or a standing order to copy mail somewhere
				`|\b(?:always|also|secretly|silently)\s+(?:bcc|cc|forward|send|copy|email|post)\b[^.!?\n]{0,60}@[a-z0-9-]+\.`)},
		{PoisonSecrets, regexp.MustCompile(
			"~/\\.ssh|\\.ssh/|\\bid_(?:rsa|dsa|ecdsa|ed25519)\\b|(?:^|[\\s'\"`(/])\\.env\\b|\\.aws/credentials|\\.git-credentials|\\.netrc\\b|\\.npmrc\\b|\\.pgpass\\b|\\.docker/config\\.json|\\.kube/config|/etc/(?:passwd|shadow)\\b|\\.gnupg\\b|\\bmcp\\.json\\b|claude_desktop_config" +
				`|\b(?:read|include|send|attach|append|upload|forward|exfiltrate|leak|collect|extract|dump|copy)\b[^.!?\n]{0,40}\b(?:the user's|user's|their|any|every)\s+(?:private keys?|ssh keys?|secret keys?|api keys?|access tokens?|auth tokens?|session tokens?|bearer tokens?|tokens|credentials|passwords?|passphrases?|secrets|cookies|seed phrases?)\b`)},
		{PoisonConceal, regexp.MustCompile(
			`\b(?:do not|don't|dont|never|must not|should not)\s+(?:tell|inform|notify|alert|show|let)\b[^.!?\n]{0,30}\b(?:the user|the human|the person|them)\b` +
				`|\b(?:do not|don't|dont|never|must not|should not)\s+(?:mention|reveal|disclose)\b` +
				`|\bwithout (?:telling|informing|notifying|alerting) (?:the user|the human|the person|them|anyone)\b` +
				`|\b(?:hide|conceal)\b[^.!?\n]{0,30}\bfrom (?:the )?(?:user|human|person)\b` +
				`|\bkeep (?:this|these|it) (?:a )?secret\b` +
				`|\b(?:the )?user (?:must|should) not (?:know|see|be told|find out)\b`)},
		{PoisonInstructionBlock, regexp.MustCompile(
			`<\s*/?\s*(?:important|system|instructions?|critical|secret|hidden|admin|override)\s*>` +
				`|<\|im_start\|>|<\|system\|>|\[/?inst\]|\[system\]` +
				`|\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|other)\s+(?:instructions|rules|prompts?)\b`)},
	}
}

// maxPoisonScan bounds the text the heuristics read; descriptions are
// already cut to a bounded size by the client.
const maxPoisonScan = 64 << 10

// PoisonFlags returns the heuristics that fire on a tool description,
// in the order of the constants above, or nil when none does. It reads
// the description in NFKC (fullwidth letters become plain), in lower
// case, with invisible format characters removed and runs of white space
// made one space, so none of those hides a phrase.
func PoisonFlags(desc string) []string {
	if desc == "" {
		return nil
	}
	if len(desc) > maxPoisonScan {
		desc = desc[:maxPoisonScan]
	}
	if flags, ok := poisonMemo.Load(desc); ok {
		return slices.Clone(flags.([]string))
	}
	text := normaliseDescription(desc)
	var out []string
	for _, r := range poisonRules() {
		if r.re.MatchString(text) {
			out = append(out, r.name)
		}
	}
	if poisonMemoSize.Add(1) <= maxPoisonMemo {
		poisonMemo.Store(desc, slices.Clone(out))
	}
	return out
}

// The flags of a description are looked up again for every call to its
// tool and for every listing that shows them, so they are remembered: the
// answer depends on the text alone. At most maxPoisonMemo descriptions are
// kept, so a server that keeps changing its descriptions cannot grow it.
const maxPoisonMemo = 4096

var (
	poisonMemo     sync.Map // description → []string
	poisonMemoSize atomic.Int64
)

func normaliseDescription(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue // zero-width and bidi characters, soft hyphen
		case unicode.IsSpace(r):
			space = true
			continue
		case r == '\u2018' || r == '\u2019' || r == '\u02bc':
			r = '\''
		case r == '\u201c' || r == '\u201d':
			r = '"'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
