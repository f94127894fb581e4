// Package serve puts mcphost's gate in front of another host: `mcphost
// serve` is an MCP server (go-sdk's mcp.Server, on stdio or streamable
// HTTP) that re-exports the tools of the person's configured servers and
// runs every call through a host.Gate. It owns only its own protocol:
// naming, what a client is shown of each tool, and where a question goes.
// It decides nothing itself and reaches servers only through the gate and
// the client.Manager.
//
// # What a client sees
//
//   - Each tool under its model-facing name (server__tool, as `mcphost
//     tools --json` names it; the raw name with Options.NoPrefix), in the
//     SDK's stable order, with the effective annotations the gate decides
//     on: an untrusted, unannotated or changed tool goes out as the worst
//     case (not read-only, destructive, not idempotent, open-world), a
//     trusted one as declared with the spec's defaults filled in.
//   - A tool whose definition differs from its pin is offered exactly as
//     the chat offers it to a model: by name, with host.ChangedToolNote in
//     place of its title, description and schemas, never the new text.
//   - A description that gives the model orders (decide.PoisonFlags) is
//     not passed on: a note saying it was withheld takes its place.
//   - Titles and descriptions are sanitized (package sanitize) and bounded.
//   - With Options.ToolSearch (search.go), host.SearchToolName and the
//     tools found so far instead of every tool: a search ranks as the
//     chat's does (host.RankTools), describes each tool found as tools/list
//     would show it, and lists it before it answers. Only trusted servers'
//     tools count toward turning "auto" on, besides the host's own cap. A
//     tool not found is still callable by its exact name, through the gate.
//
// # While servers start
//
// initialize is answered at once. A server still starting whose tools are
// pinned from an earlier run (host.Pins.Pinned: the definitions the pins
// are hashes of, kept beside the state file) is offered by those
// definitions at once, under the names and with the effective hints it
// will have once it is up (early.go), so a host that lists once sees its
// tools; a call of one waits for the server and then passes the gate on
// the definition the server lists, so a definition changed since the pin
// is handled as changed, never run as the pin described it. Its start
// announces list_changed only when what it lists differs. A server still
// starting with nothing pinned holds tools/list for up to a second after
// Start, and for up to Options.ListWait while there would be no tool at
// all to offer; a resources/read not found while servers start names them
// as starting.
//
// # Calls and questions
//
// Each client session has its own host.Gate (its grants and taint),
// sharing the manager, pins and audit log with every other session; each
// audit record names the client (clientInfo name and version) and the
// serve session.
//
// Over HTTP, who may call is the holder of serve's one bearer token
// (Handler), or, for a team, whoever brings an access token an OAuth
// issuer made for serve (HandlerOAuth, oauth.go: the MCP authorization
// spec's resource server, with its Protected Resource Metadata and its
// 401 challenges). Then the token's person (issuer and subject) owns the
// session it opens, and a stateless identity is that person's: grants and
// taint are never shared between people, and the audit record and the
// telemetry name the person and the token's client. Who approves a team's
// held calls is team.go's: the team approval page (TeamPage) logs people
// in with the same issuer, shows each person their own held calls, and
// the calls Options.Route sends to an approver group only to its members
// (never to the caller under four eyes); a routed call is never asked of
// its caller's form or approver.
//
// Over HTTP, a request of 2026-07-28 or later (NewProtocol: its
// MCP-Protocol-Version header or its _meta says so) goes to go-sdk's
// stateless handler and every other request to the stateful one, both
// over the one mcp.Server, so both see the same tools, prompts and
// resources. The stateless protocol has no sessions, and go-sdk's session
// of such a request lasts the request, so a stateless client is its
// declared identity (clientInfo name and version from the request's
// _meta): one gate and one serve session id per identity for serve's
// life. Its grants "for this session" last until serve stops, and so does
// its taint, which errs on the side of asking; any client with the token
// that declares the same identity shares them (every client that
// declares none is one identity), since the token is what is trusted. At most MaxStatelessClients identities are kept and none is
// dropped (its taint would go with it): one more is refused
// (ErrTooManyClients). Its elicitation capability is read per request, and
// a question's sealed state binds the identity's session id. Each request's
// asker (the client's route to a person, with the answer the request came
// with, if any) goes to the gate with the call, read, prompts/get or
// subscription as a parameter (host.Call.Asker, host.Asking), never in the
// context; the identity's gate has no asker of its own, so a request that
// passed none would be refused as needing a person no one could ask. A call that needs a person is asked, in this order,
// through the client's own elicitation (a form bound to that one call,
// showing every argument, the shortest first, each long value cut with its
// size named, and offering only deny when it cannot show them all; decline,
// cancel, a timeout or a tier-3 confirmation that is not the raw tool name
// all deny; a 2026-07-28 client's answer is bound by its sealed state to
// the tool's definition as asked, and one about a definition since
// replaced brings a new question instead), through an Approver that is waiting, or not at all:
// then the call is refused as a tool error that says what needed approval
// and how to get it, with reason needs-approval in the audit log.
//
// A server's own question (elicitation/create) or sampling request is
// passed to the client whose call is running on that server when exactly
// one call is (on that call's stream over HTTP; a forwarded prompt or read
// counts as one), else to the one connected client, when it answers forms
// that way (ServerElicitation, ServerSampling); otherwise the headless
// rule answers it. A client of 2026-07-28 cannot be sent a request, so its
// call is parked (park.go): it runs on in the background while the
// client's request returns the question as an input-required result,
// with a sealed state of its own kind (not the approval round's) bound to
// the identity, tool, argument hash, parked call and round; the retry's
// answer goes to the waiting server request, and the retry returns the
// result or the next question. A call no retry resumes within AskTimeout,
// or whose client's next call of the server runs first, has its question
// declined and its later ones refused; its result is recorded, returned to
// no one. Parked calls are bounded (MaxParkedPerClient, MaxParked). A server's log
// message during a call goes to the client whose calls are the only ones
// running there, at or above the level it set, marked with the server's
// name and sanitized (RelayLog); at other times it goes to no one. A
// server's roots/list is answered with the configured roots when there
// are any, else with the bounded roots of the client whose call is the
// one running there (ServerRoots), else with none.
//
// # Prompts, resources, templates, completions and subscriptions
//
// Their lists are forwarded escaped and bounded (forward.go); every request
// that reaches a server passes the client's gate, the one path the chat
// and `mcphost read` take too (host.Gate.ReadResource, GetPrompt and
// Subscribe, one function in the gate): a resources/read, listed or
// through a template, as SERVER/resources/read with {"uri": ...} (a
// file:// URI examined as a path, so mcphost's own files are asked at tier
// 3); a prompts/get as SERVER/prompts/get with its name and arguments; a
// resources/subscribe as a read of its URI (a refused one is never made,
// so its updates reach no one); each decided, asked about, audited and,
// but for a subscription, tainting like a call. A completion/complete is
// sent only when the gate would allow, unasked, the prompts/get or read it
// leads to (completion.go), else its values are none. A read or prompts/get
// that needs a person is asked through a 2025-11-25 client's form, a
// 2026-07-28 client's own input-required round (operationRound, sealed as a
// call's is), else a waiting approver; a 2026-07-28 client's subscription,
// which has no round, goes to a waiting approver or is refused saying how
// to approve it. Prompts go out
// under promptName's names (raw with NoPrefix), which no server can take
// from another; resources under their URIs and templates under their URI
// templates, each kept by the server that offered it first; a URI that no
// listed resource has is read from the first-forwarded server whose
// template matches it. Completion values are bounded. Subscriptions are
// declared up front and refused, saying so, when the URI's server has
// none; serve holds one per URI at that server while a client session
// does, and relays the server's updates only to the sessions subscribed
// (subscribe.go). A server's list_changed for prompts or resources makes
// serve list them again. Every cacheable result is marked private: the
// lists differ per client and a read passed that client's gate.
//
// # Guarantees and the tests that hold them
//
// Each has a row in scripts/mutants/mutants.txt whose mutation the test
// catches: untrusted tools go out as the worst case
// (TestExportedNamesAndEffectiveAnnotations); a server still starting is
// offered by its pinned definitions and its start announces nothing that
// did not change (TestAPinnedServerIsOfferedWhileItStarts), and a call of
// one never runs against a changed definition
// (TestAPinnedToolNeverRunsAgainstAChangedDefinition); without pins the
// list waits (TestWithoutPinsTheListWaitsForAStartingServer) and a resource
// not found yet names the servers still starting
// (TestAResourceNotFoundWhileAServerStartsSaysSo); a changed definition is
// withheld (TestChangedDefinitionIsWithheldAndForwarded) and a poisoned
// description replaced (TestPoisonedDescriptionIsNotPassedOn); an answer
// approves only its own call (TestAnAnswerApprovesOnlyItsCall), and in a
// second round only with mcphost's sealed state for exactly those
// arguments, once (TestAnAnswerCannotBeReplayedForOtherArguments), and
// for the stateless identity it was asked of
// (TestHTTPAnAnswerIsBoundToTheStatelessIdentity); a stateless client's
// grants belong to its identity while a 2025-11-25 client keeps its
// session's (TestHTTPStatelessClientsAreKeyedByIdentity), whose requests
// version routing never sends to the stateless handler
// (TestNewProtocolRoutesOnlyWhatSaysSo); the identities are bounded and
// none is dropped (TestHTTPStatelessIdentitiesAreBounded); a
// tier-3 answer needs the raw tool name (TestTier3NeedsTheToolNameConfirmed);
// with no one to ask the call is refused with needs-approval
// (TestWithoutElicitationTheCallIsRefusedWithTheReason); an approver is
// asked only while it waits; over HTTP the bearer token and the Origin are
// checked (TestGuardNeedsTheTokenAndTheOrigin) and a non-loopback address
// needs --allow-remote (TestCheckListen); with tool search, an untrusted
// server's tools do not turn it on
// (TestAnUntrustedServersManyToolsDoNotTurnAutoSearchOn), a search returns
// no poisoned description (TestSearchDoesNotReturnAPoisonedDescription)
// and no changed definition (TestSearchWithholdsAChangedDefinition), the
// tools listed stay within the host's cap
// (TestSearchFoundToolsStayWithinTheHostsCap) and no server's tool takes
// the search's name (TestTheSearchToolsNameIsMcphosts); without the token
// only a loopback address is served, never with --allow-remote (TestCheckNoToken), and the
// Origin is still checked (TestWithoutTheTokenTheOriginIsStillChecked); a
// server's question goes only to the client whose call is the one running
// there (TestAServersQuestionGoesToTheClientWhoseCallRunsThere), to a
// 2026-07-28 client as input-required rounds of a call that runs once
// (TestAServersQuestionReachesANewProtocolClientAsInputRequired,
// TestAParkedCallRunsOnceAcrossRounds), resumed only by a state sealed for
// that client, tool and arguments (TestARelayedStateIsBoundToItsCall),
// declined when no one resumes it (TestAParkedCallNoOneResumesIsDeclined)
// or the client moved on (TestANewCallEndsTheWaitOfTheClientsIdleCall),
// asked only of a client that declared the capability
// (TestAQuestionTheClientCannotAnswerIsDeclined), never given a question
// asked during a forwarded prompt
// (TestAQuestionDuringAPromptIsNotTakenForTheParkedCall) and bounded
// (TestParkedCallsAreBounded); its log
// messages only to the client calling it, sanitized
// (TestAServersLogReachesTheCallingClient); a template read goes
// to the server whose template was offered first and a hostile template's
// text is sanitized (TestTemplatesAreForwardedAndReadFromTheirOwner);
// completion values are bounded, sanitized lines
// (TestCompletionsGoToTheOwnerBounded); a subscription is released when
// its last session leaves (TestSubscriptionsAreForwardedRelayedAndReleased)
// and made again when its server restarts
// (TestSubscriptionsAreMadeAgainAfterARestart); an update is relayed only
// from the server the subscription was made at
// (TestAnUpdateIsRelayedOnlyFromTheURIsServer); a read, prompts/get,
// subscription or completion passes the client's gate
// (TestAReadThroughServePassesTheClientsGate,
// TestSubscriptionsAndCompletionsFollowTheReadDecision), a template read of
// mcphost's own files is not returned unasked
// (TestATemplateReadOfMcphostsOwnFilesIsNotReturnedUnasked) and a read
// taints (TestAReadThroughServeTaintsTheSession); an answer approves only
// the definition it was asked about
// (TestAnAnswerApprovesOnlyTheDefinitionItWasAskedAbout,
// TestAProvidedAnswerApprovesOnlyItsDefinition), its tool
// (TestAnAnswerNamesItsTool), until it expires (TestAnAnswerExpires); the
// form shows every argument (TestTheFormShowsEveryArgumentTheShortestFirst),
// escaped (TestTheFormEscapesArguments), or only denies
// (TestArgumentsAFormCannotShowCanOnlyBeDenied), and a silent client's
// question times out (TestAFormNoOneAnswersTimesOut); a prompt cannot take
// another server's name (TestAPromptCannotTakeAnotherServersName) and its
// description is escaped (TestAForwardedPromptIsEscaped); a URI stays with
// the server that offered it first
// (TestTheServerThatOfferedAURIFirstKeepsIt); lists are cached privately
// (TestListsAreCachedPrivately); a resource's text is escaped
// (TestAResourcesTextIsEscaped); a server's URL question never reaches a
// client (TestAServersURLQuestionIsNeverSentToTheClient), nor does a
// question a client cannot answer or that could be either of two clients'
// (TestAServersQuestionGoesOnlyWhereItCanBeAnswered); a client that takes
// no forms is not sent one (TestAClientThatTakesNoFormsIsNotAskedWithOne);
// no asker or answer travels in a context, only the two routing keys do
// (TestNoAskerTravelsInAContext), and a stateless client's question goes to
// the asker of its own request
// (TestHTTPClientOfTheNewProtocolIsAskedWithInputRequired).
package serve
