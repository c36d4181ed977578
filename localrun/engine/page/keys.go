package page

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
)

// namedKeys are the keys KeyPress accepts by name (case-insensitive), with
// the rune chromedp's kb package encodes them from.
var namedKeys = map[string]string{
	"enter": kb.Enter, "return": kb.Enter, "tab": kb.Tab, "escape": kb.Escape, "esc": kb.Escape,
	"backspace": kb.Backspace, "delete": kb.Delete, "del": kb.Delete, "insert": kb.Insert,
	"arrowup": kb.ArrowUp, "arrowdown": kb.ArrowDown, "arrowleft": kb.ArrowLeft, "arrowright": kb.ArrowRight,
	"up": kb.ArrowUp, "down": kb.ArrowDown, "left": kb.ArrowLeft, "right": kb.ArrowRight,
	"home": kb.Home, "end": kb.End, "pageup": kb.PageUp, "pagedown": kb.PageDown,
	"space": " ", "f1": kb.F1, "f2": kb.F2, "f3": kb.F3, "f4": kb.F4, "f5": kb.F5, "f6": kb.F6,
	"f7": kb.F7, "f8": kb.F8, "f9": kb.F9, "f10": kb.F10, "f11": kb.F11, "f12": kb.F12,
}

var modifierKeys = map[string]kb.Modifier{
	"control": kb.ModifierCtrl, "ctrl": kb.ModifierCtrl, "shift": kb.ModifierShift,
	"alt": kb.ModifierAlt, "option": kb.ModifierAlt, "meta": kb.ModifierMeta,
	"cmd": kb.ModifierMeta, "command": kb.ModifierMeta,
}

// KeyNames lists the key names KeyPress accepts besides single printable
// characters, for error messages and prompts.
func KeyNames() []string {
	names := make([]string, 0, len(namedKeys))
	for k := range namedKeys {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// parseKeys turns "Enter", "Control+A", "Shift+Tab" or "a" into the key
// events to send: keyDown (with the text the key types) and keyUp.
func parseKeys(keys string) ([]input.DispatchKeyEventParams, error) {
	keys = strings.TrimSpace(keys)
	if keys == "" {
		return nil, fmt.Errorf("%w: empty", ErrUnknownKey)
	}
	parts := strings.Split(keys, "+")
	if strings.HasSuffix(keys, "++") || keys == "+" {
		// "Control++" means Control and the plus key.
		parts = append(strings.Split(strings.TrimSuffix(keys, "++"), "+"), "+")
		if keys == "+" {
			parts = []string{"+"}
		}
	}
	var mods kb.Modifier
	for _, m := range parts[:len(parts)-1] {
		mod, ok := modifierKeys[strings.ToLower(strings.TrimSpace(m))]
		if !ok {
			return nil, fmt.Errorf("%w: %q in %q (modifiers: Control, Shift, Alt, Meta)", ErrUnknownKey, m, keys)
		}
		mods |= mod
	}
	last := strings.TrimSpace(parts[len(parts)-1])
	if last == "" {
		return nil, fmt.Errorf("%w: no key in %q", ErrUnknownKey, keys)
	}
	var r rune
	if s, ok := namedKeys[strings.ToLower(last)]; ok {
		r, _ = utf8.DecodeRuneInString(s)
	} else if utf8.RuneCountInString(last) == 1 {
		r, _ = utf8.DecodeRuneInString(last)
		if _, ok := kb.Keys[r]; !ok || r < ' ' {
			return nil, fmt.Errorf("%w: %q", ErrUnknownKey, last)
		}
		if mods&(kb.ModifierCtrl|kb.ModifierMeta) != 0 && r >= 'A' && r <= 'Z' {
			// Control+A means the "a" key with Control, not Shift+A.
			r = r - 'A' + 'a'
		}
	} else {
		return nil, fmt.Errorf("%w: %q (use one of %s, or a single character)", ErrUnknownKey, last, strings.Join(KeyNames(), ", "))
	}
	return keyEvents(r, mods), nil
}

// keyEvents encodes one key press as keyDown (carrying the text the key
// types, like a real keyboard) and keyUp.
func keyEvents(r rune, mods kb.Modifier) []input.DispatchKeyEventParams {
	evs := kb.Encode(r)
	var down, up input.DispatchKeyEventParams
	for _, e := range evs {
		switch e.Type {
		case kb.KeyDown:
			down = *e
		case kb.KeyUp:
			up = *e
		case kb.KeyChar:
			down.Text, down.UnmodifiedText = e.Text, e.UnmodifiedText
		}
	}
	down.Modifiers |= int64(mods)
	up.Modifiers |= int64(mods)
	if mods&(kb.ModifierCtrl|kb.ModifierAlt|kb.ModifierMeta) != 0 {
		down.Text, down.UnmodifiedText = "", ""
	}
	if down.Text == "" {
		down.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	return []input.DispatchKeyEventParams{down, up}
}

// typable reports whether r can be typed as key events (kb knows it and it
// types itself).
func typable(r rune) bool {
	k, ok := kb.Keys[r]
	return ok && k.Print && r >= ' ' && r != 0x7f
}
