package decide

// Decide returns the decision for one call. It is a pure function of the
// policy and the input: no I/O, no clock, no randomness, and the same
// input always yields the same decision with the same reasons in the same
// order. A nil *Policy decides as Compile(nil, Options{}) would: no rules
// and ApproveNone.
//
// The steps, each explained by a reason:
//  1. Effective hints and class. Annotations from an untrusted server, a
//     tool without annotations or with malformed ones, or a definition
//     that differs from its pin count as the worst case (class Unknown).
//     Otherwise absent hints take the spec defaults, and a read-only claim
//     that contradicts destructiveHint:true or the tool's name (or what
//     it looks like, see Skeleton) is not believed.
//  2. Tier from the class and world, lowered from T2 to T1 for an
//     idempotent destructive call that names only paths that do not exist
//     yet (Input.NewPaths, NewPathsMatter), raised to T1 by the
//     auto-approve level where it applies, or by a poisoned description
//     (PoisonFlags). T0 allows; T1 to T3 ask.
//  3. The first matching deny rule refuses, whatever else holds.
//  4. Invalid arguments make the call ask at least; arguments that lead
//     to a protected path (see Input.Bases and Input.Paths), whatever the
//     class, or to a directory that holds one, unless the call only reads
//     (see readsPaths), make it ask at T3. Nothing below lowers that.
//  5. The first matching ask rule makes the call ask; otherwise the first
//     matching allow rule allows, unless step 4 applies or the
//     definition changed. An allow rule applies to an untrusted server
//     only when its server part names the server exactly; never to a tool
//     with a poisoned description; and to an open-world call in a tainted
//     session only when it says "evenWhenTainted". Deny and ask rules
//     also match the tool name's confusable skeleton.
//  6. A call that still asks is allowed by a matching grant given for a
//     call of its tier or a riskier one, unless an ask rule matched, step
//     4 applies, or the definition changed. An open-world call in a
//     tainted session is allowed only if it is a read and the grant was
//     given in that state (Grant.Tainted).
//  7. In Headless mode Ask becomes Deny.
//
// A call the person asked for themselves (Input.ByPerson) starts from
// Allow at step 2, whatever its tier; steps 3 to 5 apply to it as to any
// call.
func (p *Policy) Decide(in Input) Decision {
	if p == nil {
		p = zeroPolicy
	}
	var rs reasonList
	var d Decision
	t := &in.Tool

	worst := false
	if !in.Server.Trusted {
		rs.add(rUntrusted)
		worst = true
	}
	switch {
	case !t.Present:
		rs.add(rNoAnnotations)
		worst = true
	case t.Malformed:
		rs.add(rMalformed)
		worst = true
	}
	changed := t.PinnedHash != "" && t.PinnedHash != t.DefinitionHash
	if changed {
		rs.add(rChanged)
		worst = true
	}
	if worst {
		d.Effective, d.Class = worstHints, Unknown
	} else {
		d.Effective, d.Class = resolve(t.Name, t.Declared, &rs)
		switch d.Class {
		case Read:
			rs.add(rReadOnly)
		case Additive:
			rs.add(rAdditive)
		case Destructive:
			rs.add(rDestructive)
		}
		if d.Class != Read && d.Effective.Idempotent == True {
			rs.add(rIdempotent)
		}
		if d.Effective.OpenWorld == True {
			rs.add(rOpenWorld)
		} else {
			rs.add(rClosedWorld)
		}
	}
	openWorld := d.Effective.OpenWorld == True
	poisoned := false
	for _, f := range PoisonFlags(t.Description) {
		rs.add(rPoisoned[f])
		poisoned = true
	}
	d.Tier = tierOf(d.Class, openWorld)
	if d.Tier == T2 && in.NewPaths && NewPathsMatter(t.Name, d) {
		// An overwrite of what is not there loses nothing: still asked, as
		// a plain confirmation, and a grant given for it covers no call
		// that names something that exists (Grant.Tier).
		d.Tier = T1
		rs.add(rNewPaths)
	}
	if poisoned && d.Tier == T0 {
		d.Tier = T1 // a poisoned description always asks
	}
	if d.Tier == T0 && !in.ByPerson && (p.auto == ApproveNone || (p.auto == ApproveReads && d.Class == Additive)) {
		d.Tier = T1
		rs.add(rAutoApprove)
	}
	d.Retry = !worst && (d.Class == Read || d.Effective.Idempotent == True)

	verdict := Ask
	if d.Tier == T0 {
		verdict = Allow
	} else if in.ByPerson {
		// The person's own request is not a model's guess to confirm;
		// what follows (deny and ask rules, invalid arguments, protected
		// paths) still holds it back.
		verdict = Allow
	}
	args := viewArgs(in.Args)
	args.nameSkel = Skeleton(t.Name)
	args.poisoned = poisoned
	if r := p.firstMatch(Deny, &in, &d, &args); r != nil {
		d.Verdict, d.Rule = Deny, r.id
		rs.add(r.reason)
		d.Reasons = rs.slice()
		return d
	}

	locked := false // nothing may lower the verdict below Ask
	if !args.valid {
		rs.add(rInvalidArgs)
		locked = true
	} else if p.protects(&args, &in, readsPaths(&in, d.Class, changed)) {
		rs.add(rProtected)
		locked = true
		d.Tier = T3
	}

	askRule := p.firstMatch(Ask, &in, &d, &args)
	switch {
	case askRule != nil:
		verdict, d.Rule = Ask, askRule.id
		rs.add(askRule.reason)
	case !locked && !changed:
		if r := p.firstMatch(Allow, &in, &d, &args); r != nil {
			verdict, d.Rule = Allow, r.id
			rs.add(r.reason)
		} else if !in.Server.Trusted && p.wildcardAllows(&in, &d, &args) {
			rs.add(rAllowNeedsServer)
		}
	}
	if locked && verdict == Allow {
		verdict = Ask
	}

	if verdict == Ask && askRule == nil && !locked && !changed {
		tainted := openWorld && in.Session.Tainted()
		if tainted {
			rs.add(rTainted)
		}
		// In a tainted session an open-world call could carry private data
		// out: only a read, under a grant the person gave knowing of the
		// taint, runs without asking again.
		if !tainted || d.Class == Read {
			if g := findGrant(&in, d.Tier, tainted); g != nil {
				verdict, d.Grant = Allow, g
				rs.add(rGrant[g.Scope])
			}
		}
	}

	if in.ByPerson && verdict == Allow && d.Tier != T0 {
		rs.add(rByPerson)
	}
	if in.Mode != Interactive && verdict == Ask {
		verdict = Deny
		rs.add(rNeedsApproval)
	}
	d.Verdict = verdict
	d.Reasons = rs.slice()
	return d
}

// NewPathsMatter reports whether Input.NewPaths can change the decision d
// for a call of the tool named tool: a destructive call of a trusted
// server's unchanged tool, closed world (tier T2), whose tool declares
// itself idempotent and whose name says nothing of deleting, emptying or
// rolling back (see nameLosesMore). Such a tool's destructive effect is an
// overwrite: repeating the call changes nothing more, so what it can lose
// is what is already at the place it writes. A tool that is not
// idempotent (a move, an edit, a shell command) may lose what its
// arguments do not name, and so may a "delete_branch" or a "reset_db"
// whose arguments name no file; they keep T2. A host finds NewPaths,
// which reads the file system, only when this holds.
func NewPathsMatter(tool string, d Decision) bool {
	return d.Class == Destructive && d.Effective.OpenWorld == False && d.Effective.Idempotent == True &&
		!nameLosesMore(tool)
}

// readsPaths reports whether the protected-path check may take the call
// as a read, for which a directory that merely holds a protected path
// (the project root with its .mcp.json, the home directory with .config)
// does not count: listing it shows names, not contents. A Read call is
// one. So is a call of an untrusted server's tool whose own annotations,
// read as a trusted server's would be (a present, well-formed object
// claiming readOnlyHint without contradiction from destructiveHint or the
// name), make it a read, while its definition is the pinned one: class
// Unknown already makes it ask at T3, and the claim decides nothing else.
// It is what the tool says it does with its path, and a tool that lies
// about that needs no path argument to reach mcphost's files. A tool
// without such a claim, with a changed definition, or any other class is
// not a read here: moving or deleting an ancestor reaches what it holds.
func readsPaths(in *Input, class Class, changed bool) bool {
	if class == Read {
		return true
	}
	// A trusted server's unchanged tool has its declared class already.
	if changed || in.Server.Trusted || !in.Tool.Present || in.Tool.Malformed {
		return false
	}
	var scratch reasonList
	_, declared := resolve(in.Tool.Name, in.Tool.Declared, &scratch)
	return declared == Read
}

// firstMatch returns the first rule of effect eff that matches the call, in
// the order the rules were given. Rules naming the server exactly and
// rules with a wildcard server are kept in two lists, merged here by
// position. For an untrusted server, allow rules with a wildcard server
// are skipped.
func (p *Policy) firstMatch(eff Verdict, in *Input, d *Decision, a *argsView) *rule {
	var lit []int32
	if l := p.byServer[in.Server.Name]; l != nil {
		lit = l[eff]
	}
	wild := p.wild[eff]
	if eff == Allow && !in.Server.Trusted {
		wild = nil
	}
	for len(lit) > 0 || len(wild) > 0 {
		var i int32
		if len(wild) == 0 || (len(lit) > 0 && lit[0] < wild[0]) {
			i, lit = lit[0], lit[1:]
		} else {
			i, wild = wild[0], wild[1:]
			if !p.rules[i].server.match(in.Server.Name) {
				continue
			}
		}
		if r := &p.rules[i]; r.matches(in, d, a) {
			return r
		}
	}
	return nil
}

// wildcardAllows reports whether an allow rule with a wildcard server
// would have matched, to explain why it did not apply.
func (p *Policy) wildcardAllows(in *Input, d *Decision, a *argsView) bool {
	for _, i := range p.wild[Allow] {
		if r := &p.rules[i]; r.server.match(in.Server.Name) && r.matches(in, d, a) {
			return true
		}
	}
	return false
}

// matches checks everything but the server part, which firstMatch checked.
func (r *rule) matches(in *Input, d *Decision, a *argsView) bool {
	// Deny and ask rules also match look-alikes of the names they were
	// written for; an allow rule only ever matches the raw name, so a
	// look-alike never gains what the original was given.
	if !r.tool.match(in.Tool.Name) && (r.effect == Allow || !r.toolSkel.match(a.nameSkel)) {
		return false
	}
	if r.hasClass {
		if r.effect == Allow {
			if d.Class.risk() > r.class.risk() {
				return false
			}
		} else if d.Class.risk() < r.class.risk() {
			return false
		}
	}
	h, e := &r.hints, &d.Effective
	if (h.ReadOnly != Absent && h.ReadOnly != e.ReadOnly) ||
		(h.Destructive != Absent && h.Destructive != e.Destructive) ||
		(h.Idempotent != Absent && h.Idempotent != e.Idempotent) ||
		(h.OpenWorld != Absent && h.OpenWorld != e.OpenWorld) {
		return false
	}
	for i := range r.args {
		if !r.args[i].eval(a, r.effect) {
			return false
		}
	}
	// In a tainted session an open-world call could carry private data
	// out, steered by outside content: an allow rule written before
	// that was known applies only if it says so.
	if r.effect == Allow && !r.tainted && e.OpenWorld == True && in.Session.Tainted() {
		return false
	}
	// Rules are written without reading descriptions; a description
	// that gives the model orders needs a person who has seen it.
	if r.effect == Allow && a.poisoned {
		return false
	}
	return true
}
