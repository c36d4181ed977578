package main

import (
	"encoding/json"

	"github.com/abctl/abctl/client"
	ts "github.com/abctl/abctl/internal/testsite"
)

// Task is one task of the evaluation: what a user asks on a page of the
// test site, and how the evaluation tells that it was done.
type Task struct {
	// Name identifies the task (-run matches it; recordings are
	// NAME.json): lower case, digits and dashes.
	Name string
	// Classes are what the task exercises: a class of issue 29 (see
	// Classes) and the widget of real sites it is built like.
	Classes []string
	// Start is the path of the page the run starts on.
	Start string
	// Prompt is the user's request, written as a user would: it names no
	// element id and nothing of how the page is built. "{{site}}" stands
	// for the site's origin (http://127.0.0.1:PORT).
	Prompt string
	// Schema is the task's data_extraction_schema, nil for none.
	Schema json.RawMessage
	// ErrorCodes is the task's error_code_mapping, nil for none.
	ErrorCodes map[string]string
	// Login runs the task as an agent whose navigation block has the
	// portal credential (a password and an authenticator secret for the
	// site's secure sign-in) in its parameter keys, as a user with a
	// saved credential would; the model sees only placeholders.
	Login bool
	// MaxSteps is the task's step limit; 0 means the engine's default.
	MaxSteps int
	// Check is what success means.
	Check Check
}

// Check is a task's success condition: every part set must hold.
type Check struct {
	// Status is the run status expected; "" means completed.
	Status client.RunStatus
	// Events are reports the site must have received during the run.
	Events []EventCheck
	// Output, when set, must equal the run's output (for an agent run,
	// the block's output), decoded: numbers compare as numbers, so 18 and
	// 18.0 are equal and "18.00" is not 18.
	Output any
	// Answers must each appear somewhere in the output, as a value (a
	// string or number, in any member or element): for tasks without a
	// schema, whose output has the shape the model gives it.
	Answers []any
	// Fold compares strings of Output and Answers ignoring case and runs
	// of white space.
	Fold bool
}

// EventCheck is an event the site must have received: the last one of its
// kind recorded during the run must have these form values (compared
// after trimming white space).
type EventCheck struct {
	Kind   string
	Fields map[string]string
}

// Classes are the task classes: those of issue 29 first, then the widgets.
var Classes = []string{
	// Observation.
	"nested-clickables", "script-icons", "icon-names", "autocomplete", "picker", "row-context",
	"id-collision", "identical-links", "inline-text", "long-page",
	// Actions.
	"inner-scroll", "read-only", "multi-page",
	// Prompts.
	"goal-words", "error-code", "data-shape", "action-only",
	// Scripts and extraction.
	"extraction", "schema-types",
	// Widgets.
	"form", "menu", "tabs", "dialog", "tree", "icon-bar", "date-picker", "spinner", "slider",
	"table-actions", "long-list", "login-otp", "frames", "shadow-dom", "cookie-banner",
}

func ev(kind string, kv ...string) EventCheck {
	f := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i]] = kv[i+1]
	}
	return EventCheck{Kind: kind, Fields: f}
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// Tasks are the evaluation's tasks, in the order they run.
func Tasks() []Task {
	cat388 := ts.EvalCatalog(388)
	cat22 := ts.EvalCatalog(22)
	return []Task{
		// Trees: nested <li> with a pointer cursor each.
		{Name: "tree-select", Classes: []string{"nested-clickables", "tree"}, Start: ts.PageEvalTree,
			Prompt: "In the team directory, select Juan from the Design team.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalTree), "person", "Juan", "team", "Design")}}},
		{Name: "tree-deep", Classes: []string{"nested-clickables", "tree"}, Start: ts.PageEvalTree,
			Prompt: "Select Nathalie, who works in the Platform group of Engineering.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalTree), "person", "Nathalie", "team", "Engineering/Platform")}}},
		{Name: "tree-similar-names", Classes: []string{"nested-clickables", "tree"}, Start: ts.PageEvalTree,
			Prompt: "Select Juana in the Sales team.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalTree), "person", "Juana", "team", "Sales")}}},

		// Icon bars: CSS content:url() icons bound by script.
		{Name: "icons-like", Classes: []string{"script-icons", "icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalIcons,
			Prompt: "Like Priya Raman's post.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalIcons), "post", "priya", "action", "like")}}},
		{Name: "icons-share", Classes: []string{"script-icons", "icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalIcons,
			Prompt: "Share the post about the harbour festival fireworks.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalIcons), "post", "lucas", "action", "share")}}},
		{Name: "icons-reply", Classes: []string{"script-icons", "icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalIcons,
			Prompt: "Reply to Mei Tanaka's post (just open the reply, nothing to write).",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalIcons), "post", "mei", "action", "reply")}}},
		{Name: "icons-menu-report", Classes: []string{"script-icons", "icon-names", "menu", "row-context"}, Start: ts.PageEvalIcons,
			Prompt: "Report Omar Haddad's post.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalIcons), "post", "omar", "action", "report")}}},

		// Unnamed icons and icon fonts.
		{Name: "inbox-star", Classes: []string{"icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalInbox,
			Prompt: "Star the email from Lena Fischer.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalInbox), "message", "lena", "action", "star")}}},
		{Name: "inbox-trash", Classes: []string{"icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalInbox,
			Prompt: "Delete the email from the Billing team.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalInbox), "message", "billing", "action", "trash")}}},
		{Name: "inbox-archive", Classes: []string{"icon-names", "icon-bar", "row-context"}, Start: ts.PageEvalInbox,
			Prompt: "Archive the email titled \"Quarterly numbers\".",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalInbox), "message", "grace", "action", "archive")}}},

		// Menus.
		{Name: "menu-hover", Classes: []string{"menu"}, Start: ts.PageEvalMenu,
			Prompt: "Open the pricing for teams from the Products menu.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalMenu), "item", "Teams pricing")}}},
		{Name: "menu-submenu", Classes: []string{"menu"}, Start: ts.PageEvalMenu,
			Prompt: "Switch the site's language to Deutsch; it is under the account menu.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalMenu), "item", "Deutsch")}}},

		// Tabs.
		{Name: "tabs-save", Classes: []string{"tabs", "form"}, Start: ts.PageEvalTabs,
			Prompt: "Choose express delivery for this tent and save the choice.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalTabs), "speed", "express")}}},
		{Name: "tabs-extract", Classes: []string{"tabs", "extraction", "schema-types"}, Start: ts.PageEvalTabs,
			Prompt: "How many days do I have to return this tent, and what restocking fee (in percent) applies?",
			Schema: schema(`{"type":"object","properties":{"return_days":{"type":"integer"},"restocking_fee_percent":{"type":"number"}},"required":["return_days","restocking_fee_percent"]}`),
			Check:  Check{Output: map[string]any{"return_days": 45, "restocking_fee_percent": 7.5}}},

		// Dialogs.
		{Name: "dialog-delete", Classes: []string{"dialog", "row-context"}, Start: ts.PageEvalDialog,
			Prompt: "Delete the project apollo-web.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalDialog), "action", "delete", "project", "apollo-web")}}},
		{Name: "dialog-invite", Classes: []string{"dialog", "form"}, Start: ts.PageEvalDialog,
			Prompt: "Invite sam@example.org as an editor.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalDialog), "action", "invite", "email", "sam@example.org", "role", "editor")}}},
		{Name: "native-prompt", Classes: []string{"dialog"}, Start: ts.PageDialogs,
			Prompt: "Use the Enter name button and answer its question with the name Grace.",
			Check:  Check{Events: []EventCheck{ev(ts.EventDialog, "type", "prompt", "result", "Grace")}}},

		// Autocompletes.
		{Name: "flights-autocomplete", Classes: []string{"autocomplete", "form"}, Start: ts.PageEvalFlights,
			Prompt: "Search flights from Paducah to Utica.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalFlights), "from", "PAH", "to", "UCA")}}},
		{Name: "flights-same-city", Classes: []string{"autocomplete", "form"}, Start: ts.PageEvalFlights,
			Prompt: "Search flights from Portland, Maine to Buffalo.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalFlights), "from", "PWM", "to", "BUF")}}},
		{Name: "weather-autocomplete", Classes: []string{"autocomplete"}, Start: ts.PageEvalWeather,
			Prompt: "Show the weather forecast for Springfield, Missouri.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalWeather), "city", "springfield-mo")}}},

		// Date pickers and spinners.
		{Name: "booking-next-month", Classes: []string{"picker", "read-only", "date-picker", "spinner"}, Start: ts.PageEvalBooking,
			Prompt: "Book 3 nights with check-in on 14 May 2027.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalBooking), "checkin", "2027-05-14", "nights", "3")}}},
		{Name: "booking-prev-month", Classes: []string{"picker", "read-only", "date-picker"}, Start: ts.PageEvalBooking,
			Prompt: "Book one night with check-in on 28 January 2027.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalBooking), "checkin", "2027-01-28", "nights", "1")}}},
		{Name: "filters-spinners", Classes: []string{"spinner", "read-only"}, Start: ts.PageEvalFilters,
			Prompt: "Set the filters to 4 guests and 2 rooms and apply them.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalFilters), "guests", "4", "rooms", "2")}}},

		// Sliders.
		{Name: "filters-range", Classes: []string{"slider"}, Start: ts.PageEvalFilters,
			Prompt: "Limit the price to at most 300 € a night and apply the filters.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalFilters), "max_price", "300")}}},
		{Name: "filters-custom-slider", Classes: []string{"slider"}, Start: ts.PageEvalFilters,
			Prompt: "Set the music volume of the welcome video to 7 and apply the filters.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalFilters), "volume", "7")}}},

		// Tables with an action per row.
		{Name: "paints-row", Classes: []string{"row-context", "table-actions", "long-page"}, Start: ts.PageEvalPaints,
			Prompt: "Select the yarrow paint in gloss finish, 2.5 L.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalPaints), "paint", "yarrow gloss 2.5 L")}}},
		{Name: "paints-row-far", Classes: []string{"row-context", "table-actions", "long-page"}, Start: ts.PageEvalPaints,
			Prompt: "Select slate paint, eggshell finish, in the 1 L tin.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalPaints), "paint", "slate eggshell 1 L")}}},
		{Name: "paints-details", Classes: []string{"identical-links", "table-actions"}, Start: ts.PageEvalPaints,
			Prompt: "Open the details of Maria Keller's order.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalPaints), "order", "1041")}}},
		{Name: "paints-details-similar", Classes: []string{"identical-links", "table-actions"}, Start: ts.PageEvalPaints,
			Prompt: "Open the details of Jon Parker's order.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalPaints), "order", "1045")}}},

		// Long lists, ids that look like the page's numbers, inline text.
		{Name: "catalog-add-far", Classes: []string{"id-collision", "long-list", "long-page"}, Start: ts.PageEvalCatalog,
			Prompt: "Add Item 347 to the basket.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalCatalog), "item", "347")}}},
		{Name: "catalog-add-near", Classes: []string{"id-collision", "long-list"}, Start: ts.PageEvalCatalog,
			Prompt: "Add Item 12 to the basket.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalCatalog), "item", "12")}}},
		{Name: "catalog-serial", Classes: []string{"long-page", "extraction", "data-shape", "inline-text"}, Start: ts.PageEvalCatalog,
			Prompt: "What is the serial number of Item 388?",
			Check:  Check{Answers: []any{cat388.Serial}, Fold: true}},
		{Name: "catalog-inline", Classes: []string{"inline-text", "extraction", "schema-types"}, Start: ts.PageEvalCatalog,
			Prompt: "What colour is Item 22, and how many of it are left?",
			Schema: schema(`{"type":"object","properties":{"colour":{"type":"string"},"left":{"type":"integer"}},"required":["colour","left"]}`),
			Check:  Check{Output: map[string]any{"colour": cat22.Colour, "left": cat22.Stock}, Fold: true}},

		// Scrolled inner containers.
		{Name: "settings-inner-scroll", Classes: []string{"inner-scroll", "form"}, Start: ts.PageEvalSettings,
			Prompt: "Turn on the weekly digest and the mentions notifications, then save the settings.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalSettings), "digest", "on", "mentions", "on")}}},
		{Name: "settings-licence", Classes: []string{"inner-scroll"}, Start: ts.PageEvalSettings,
			Prompt: "Accept the licence and save the settings.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalSettings), "accepted", "yes")}}},

		// Multi-page flows.
		{Name: "checkout", Classes: []string{"multi-page", "form", "spinner", "data-shape"}, Start: ts.PageEvalCart, MaxSteps: 20,
			Prompt: "Order two packs of coffee filters and one enamel mug, shipped express to Ada Obi, 12 Harbour Road, 5003 Bergen. " +
				"Pay with the card 4111 1111 1111 1111, expiry 08/29, CVC 123. Tell me the order number.",
			Check: Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalConfirm), "items", "filtersx2,mugx1", "name", "Ada Obi",
				"address", "12 Harbour Road", "city", "Bergen", "postcode", "5003", "shipping", "express", "card_last4", "1111")},
				Answers: []any{ts.EvalOrderNumber}}},
		{Name: "apply-flow", Classes: []string{"multi-page", "form"}, Start: ts.PageApplyStep1, MaxSteps: 15,
			Prompt: "Apply for the Basic plan as Grace Hopper (grace@example.com) and give me the reference you get.",
			Check: Check{Events: []EventCheck{ev(ts.EventApplication, "name", "Grace Hopper", "email", "grace@example.com", "plan", "basic")},
				Answers: []any{ts.ApplyReference}}},
		{Name: "billing-login-pay", Classes: []string{"login-otp", "multi-page", "row-context"}, Start: ts.PageEvalBilling, Login: true, MaxSteps: 15,
			Prompt: "Sign in to Northwind Billing with my portal credential, then open the invoices at {{site}}" + ts.PageEvalBilling + " and pay invoice INV-3012.",
			Check:  Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalBilling), "invoice", "INV-3012", "user", loginUser)}}},
		{Name: "billing-login-amount", Classes: []string{"login-otp", "multi-page", "extraction", "data-shape"}, Start: ts.PageEvalBilling, Login: true, MaxSteps: 15,
			Prompt: "Sign in to Northwind Billing with my portal credential, then open the invoices at {{site}}" + ts.PageEvalBilling + " and tell me the amount of invoice INV-3007.",
			Check:  Check{Answers: []any{1204.50}}},
		{Name: "members-login", Classes: []string{"form", "action-only"}, Start: ts.PageMembersLogin,
			Prompt: "Sign in to the members area with the username alice and the password wonderland.",
			Check:  Check{Events: []EventCheck{ev(ts.EventMembersLogin, "username", ts.MembersUser, "ok", "true")}}},

		// Prompts: error codes, a goal's own completion words.
		{Name: "members-refused", Classes: []string{"error-code", "form"}, Start: ts.PageMembersLogin,
			Prompt:     "Sign in to the members area with the username bob and the password builder.",
			ErrorCodes: map[string]string{"wrong_login": "the site refuses the username or the password", "site_down": "the site does not answer"},
			Check: Check{Status: client.RunStatusTerminated, Answers: []any{"wrong_login"},
				Events: []EventCheck{ev(ts.EventMembersLogin, "username", "bob", "ok", "false")}}},
		{Name: "contact-goal-words", Classes: []string{"goal-words", "form"}, Start: ts.PageEvalContact,
			Prompt: "Send the support team a message from ada@example.com about returns, saying: Where is my refund? " +
				"The job is done once the message is sent, whatever the site answers.",
			Check: Check{Events: []EventCheck{ev(ts.EvalEvent(ts.PageEvalContact), "email", "ada@example.com", "topic", "returns", "message", "Where is my refund?")}}},

		// Extraction, with and without a schema.
		{Name: "shop-price-no-schema", Classes: []string{"data-shape", "extraction", "form"}, Start: ts.PageShopSearch,
			Prompt: "Search the shop for headlamp and tell me its price in dollars.",
			Check:  Check{Answers: []any{45.95}}},
		{Name: "shop-socks-schema", Classes: []string{"extraction", "schema-types", "form"}, Start: ts.PageShopSearch,
			Prompt: "Search the shop for socks and list every result with its name and price.",
			Schema: schema(`{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"}},"required":["name","price"]}}`),
			Check: Check{Output: []any{map[string]any{"name": "Merino Wool Socks", "price": 24.5},
				map[string]any{"name": "Hiking Socks Twin Pack", "price": 18}}}},
		{Name: "products-out-of-stock", Classes: []string{"extraction", "table-actions"}, Start: ts.PageProducts,
			Prompt: "Which products are out of stock? Give me their SKUs.",
			Schema: schema(`{"type":"object","properties":{"skus":{"type":"array","items":{"type":"string"}}},"required":["skus"]}`),
			Check:  Check{Output: map[string]any{"skus": []any{"SKU-1004", "SKU-1006"}}}},

		// Action-only tasks and widgets of the older pages.
		{Name: "todo-add", Classes: []string{"action-only", "form"}, Start: ts.PageTodos,
			Prompt: "Add \"buy oat milk\" to my todo list.",
			Check:  Check{Events: []EventCheck{ev(ts.EventTodoAdded, "title", "buy oat milk")}}},
		{Name: "cookie-banner", Classes: []string{"cookie-banner", "action-only"}, Start: ts.PageCookieBanner,
			Prompt: "Refuse the cookies, then press Continue.",
			Check:  Check{Events: []EventCheck{ev(ts.EventCookieAccept, "choice", "reject"), ev(ts.EventBannerContinue)}}},
		{Name: "fare-search", Classes: []string{"form", "action-only"}, Start: ts.PageHostile,
			Prompt: "Search fares from Oslo to Bergen.",
			Check:  Check{Events: []EventCheck{ev(ts.EventFareSearch, "from", "Oslo", "to", "Bergen")}}},
		{Name: "shadow-inner", Classes: []string{"shadow-dom", "form"}, Start: ts.PageShadow,
			Prompt: "Type hello into the inner field and press the inner button.",
			Check:  Check{Events: []EventCheck{ev(ts.EventShadowClick, "button", "inner-button", "value", "hello")}}},
		{Name: "frame-field", Classes: []string{"frames", "form"}, Start: ts.PageFrames,
			Prompt: "In the embedded frame, type ping into the frame field and press the frame button.",
			Check:  Check{Events: []EventCheck{ev(ts.EventFrameClick, "value", "ping")}}},
	}
}
