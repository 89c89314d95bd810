"""The Audit page's keyboard in the browser, beside Streamlit's button shortcuts: keys never go dead.

Streamlit gives a focused field every key and a button shortcut none, and the main pane (not the document)
scrolls. The script makes:
- Esc hand the keys back to labeling from any field (a sidebar widget, the note, a switch or table of the
  main area): the focus leaves it; a click on a switch hands them back at once (a switch takes no letter);
- the scroll keys (PageUp / PageDown, Space, arrows, Home / End) scroll the main pane while no field has
  the focus;
- `g` scroll to the first change of the word diff (not to a highlighted shared passage), and again back
  to the top;
- a label key pressed before the label bar of a freshly opened page is drawn wait (up to
  `EARLY_KEY_WAIT_MS`) and act once it is, instead of doing nothing, only on the pair on screen when it was
  pressed. On a fresh page Streamlit draws an element once its code has loaded, which can be after the run
  is over and one button at a time (Skip after Duplicate), and a button's shortcut listens a moment after
  the button is drawn: so a key waits while its own button is not drawn (or the bar's Skip is not), and a
  key handed to a shortcut that did not take it (did not cancel it) waits and is sent again. A key pressed
  with no pair on screen (the page still loading, the database held by another process, the queue empty),
  or one whose pair was replaced meanwhile, is dropped with a message (`KEY_NOTICE_MS` on screen), never
  applied to a pair the analyst has not seen. The pair on screen is named by its URLs as shown and its
  scroll-to-top script (`/* pair A B */`, the page ids, in app/views/3_Audit.py);
- the label bar's keys reach the server one rerun at a time: a key pressed while the last one's rerun is
  under way waits for it to end (up to `KEY_RUN_WAIT_MS` for a rerun to start). Streamlit folds the
  button presses that reach it during one rerun into the next, once each button, in the order the buttons
  are drawn: three keys 40 ms apart would give one or two actions, on the pair before;
- a label key (d, n, u) carry the time it was pressed (`Date.now()` at its keydown, kept while it waits)
  to the server, through the label-keys component (`ui.label_press`), so of two tabs' labels of one pair
  the one pressed later is kept whichever reaches the server first. A label key pressed before the
  component's script is loaded waits for it (up to `LABEL_SENDER_WAIT_MS`, then it goes through its button
  and counts at the server's receive time).
The script is a constant, so it is sent once per page and installs its listeners once per window.
`PAGE_KEYS_SCRIPT`, sent on every page by the navigation, moves through the app's pages with [ and ].
"""

from __future__ import annotations

EARLY_KEY_WAIT_MS = 15_000
KEY_RUN_WAIT_MS = 2_000
# How long a label key waits for the label-keys component's script (on the 2-core box under load it came up
# to 3 s after the label bar was drawn) before it goes through its button without its press time.
LABEL_SENDER_WAIT_MS = 5_000
KEY_NOTICE_MS = 6_000
DIFF_KEY = "g"

KEYBOARD_SCRIPT = (
    """<script>if (!window.neardupKeyboard) {
    window.neardupKeyboard = {early: [], sent: 0, ran: false, queued: []};
    const state = window.neardupKeyboard;
    const main = () => document.querySelector('[data-testid="stMain"]');
    const typing = el => !!el && (el.matches('textarea, [contenteditable="true"]')
        || (el.matches('input') && !['checkbox', 'radio', 'range', 'button'].includes(el.type)));
    const keyButtons = key => [...document.querySelectorAll('[data-testid="stMain"] button kbd')]
        .filter(k => k.innerText.trim().toLowerCase() === key);
    const shortcut = key => keyButtons(key).find(k => !k.closest('button').disabled);
    // a button is drawn (enabled or not) once its element's code has loaded: on a fresh page that can be
    // after the run is over, one button at a time
    const drawn = key => keyButtons(key).length > 0;
    // the listeners stay when another page of the app is opened: this script's element is the Audit page's
    const onAudit = () => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stHtml"] script')]
        .some(s => s.textContent.includes('window.neardupKeyboard = '));
    // true: the key was taken, by a button's shortcut (it cancels the key it acts on) or by this script (held,
    // queued); false: nothing listened (a button drawn a moment before its shortcut listens)
    const replay = key => {
        state.replaying = true;  // a key sent again is not held for the label-keys component
        let taken = false;
        for (const type of ["keydown", "keyup"]) {
            const passed = document.body.dispatchEvent(new KeyboardEvent(type, {key, code: /[0-9]/.test(key)
                ? "Digit" + key : "Key" + key.toUpperCase(), bubbles: true, cancelable: true}));
            if (type === "keydown") taken = !passed;
        }
        state.replaying = false;
        if (!taken && state.sent === state.marked) state.sent = 0;  // no rerun comes of it
        return taken;
    };
    const labelKey = key => /^[dnu]$/.test(key);  // the label keys: ui.label_press.LABEL_OF_KEY
    // a label key goes to the server with its press time (Date.now() at its keydown: this machine's clock,
    // see ui/label_press.py) through the label-keys component, once its script has loaded; false: the key
    // is to reach its button's shortcut (no press time: the server's receive time stands for it)
    const sendLabel = (key, pressedAt) => {
        const send = window.neardupSendLabelKey;
        if (!labelKey(key) || !send) return false;
        state.sent = performance.now();
        state.ran = false;
        send(key, pressedAt);
        return true;
    };
    // a key that waited (queued, held) is sent with the time it was pressed; false: it was not taken
    const press = held => sendLabel(held.key, held.pressedAt) || replay(held.key);
    // the pair on screen: its URLs as shown, and its page ids from the comment of its scroll-to-top script
    // (set by the element once drawn, which may be a frame after the URLs); null with no URL on screen
    const shownPair = () => {
        const urls = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stCode"]')].slice(0, 2)
            .map(c => c.innerText.trim()).join('|');
        const marks = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stHtml"] script')]
            .map(s => s.textContent).filter(t => t.startsWith('/* pair '));
        return urls ? {urls, ids: marks.length ? marks[marks.length - 1].split(' */')[0].slice(8) : null} : null;
    };
    // the pair a key was pressed on is still on screen (its right URL may not have been drawn then)
    const samePair = (was, now) => !!was && !!now && (was.ids === null || now.ids === null || was.ids === now.ids)
        && (now.urls === was.urls || (!was.urls.includes('|') && now.urls.startsWith(was.urls + '|')));
    const notice = text => {
        let box = document.getElementById('neardup-key-notice');
        if (!box) {
            box = document.createElement('div');
            box.id = 'neardup-key-notice';
            box.setAttribute('role', 'status');
            box.style.cssText = 'position:fixed;right:1rem;bottom:1rem;z-index:100000;padding:0.6rem 1rem;'
                + 'border-radius:0.5rem;background:#fff3cd;color:#664d03;border:1px solid #ffe69c;'
                + 'font-family:sans-serif;font-size:0.9rem;box-shadow:0 2px 8px rgba(0,0,0,0.15)';
            document.body.appendChild(box);
        }
        box.textContent = text;
        clearTimeout(state.noticeTimer);
        state.noticeTimer = setTimeout(() => box.remove(), """
    + str(KEY_NOTICE_MS)
    + """);
    };
    const idle = () => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state')
        !== 'running';
    // a key pressed while the page draws, before a fresh page's label bar is drawn, or (a label key) before
    // the label-keys component's script is loaded, is held with the pair on screen when it was pressed; with
    // none on screen it is dropped at once
    const hold = (key, pressedAt) => {
        const pair = shownPair();
        if (pair !== null) state.early.push({key, pressedAt, at: performance.now(), pair});
        else if (drawn(key) && !shortcut(key)) {  // its button is drawn disabled (Undo, nothing to undo)
            const kbd = keyButtons(key)[0];
            const name = kbd.closest('button').textContent.replace(kbd.textContent, '').trim();
            notice(`Key ${key} ignored: ${name} is not available here`);
        } else notice(`Key ${key} ignored: no pair was on screen when it was pressed`);
    };
    // a key that nothing took waits again (first in line), on the pair it was pressed on
    const retry = held => {
        if (held.pair) state.early.unshift(held);
        else notice(`Key ${held.key} ignored: no pair was on screen when it was pressed`);
    };
    // a held key is sent once the run that draws the label bar is over (its shortcuts are listening) and, a
    // label key, once the component's script is loaded (or it waited long enough), only on the pair it was
    // pressed on
    const ready = held => !labelKey(held.key) || !!window.neardupSendLabelKey
        || performance.now() - held.at > """
    + str(LABEL_SENDER_WAIT_MS)
    + """;
    const flush = () => {
        const front = state.early[0];
        if (front && idle() && !state.sent && drawn(front.key) && !shortcut(front.key) && shortcut("s")) {
            state.early.shift();  // its button is drawn disabled in a bar that takes keys: a press does nothing
        } else if (front && shortcut(front.key) && idle() && !state.sent && ready(front)) {
            const held = state.early.shift();
            if (!samePair(held.pair, shownPair())) {
                notice(`Key ${held.key} ignored: the pair on screen changed since it was pressed`);
            } else if (!press(held)) retry(held);  // sent again on the next change of the page (or in 100 ms)
        }
        state.early = state.early.filter(k => performance.now() - k.at < """
    + str(EARLY_KEY_WAIT_MS)
    + """);
    };
    new MutationObserver(flush).observe(document.body, {childList: true, subtree: true});
    const app = () => document.querySelector('[data-testid="stApp"]');
    const sendNext = () => {
        state.sent = 0;
        if (!state.queued.length) return;
        const next = state.queued.shift();
        // it was pressed for the pair the key before it leads to: the one on screen now
        if (!press(next)) retry({...next, at: performance.now(), pair: shownPair()});
    };
    const watchRuns = () => {
        const el = app();
        if (!el) return setTimeout(watchRuns, 50);
        new MutationObserver(records => {
            const running = el.getAttribute('data-test-script-state') === 'running';
            if (running || records.some(r => r.oldValue === 'running')) state.ran = true;
            if (!running && state.sent && state.ran) sendNext();
            if (!running) setTimeout(flush, 0);
        }).observe(el, {attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true});
    };
    watchRuns();
    setInterval(() => {
        if (state.sent && !state.ran && performance.now() - state.sent > """
    + str(KEY_RUN_WAIT_MS)
    + """) sendNext();
        if (state.early.length) flush();  // a label key waiting for the component's script
    }, 100);
    // a shared passage (evidence.show_passages) is a coloured run too, after its numbered badge: not a change
    const firstChange = () => [...document.querySelectorAll('[data-testid="stMain"] '
        + '[data-testid="stMarkdownContainer"] span')].find(s => /background/.test(s.className + s.getAttribute('style'))
        && !/gray|Badge/.test(s.className) && !/Badge/.test(s.previousElementSibling?.className || ''));
    document.addEventListener("keydown", e => {
        const pressedAt = Date.now();
        const field = document.activeElement;
        if (e.key === "Escape") {
            if (field && field !== document.body) field.blur();
            return;
        }
        if (e.ctrlKey || e.metaKey || e.altKey || typing(field)) return;
        const typed = e.key.length === 1 ? e.key.toLowerCase() : "";
        if (/^[dnusz1-8jkm]$/.test(typed) && shortcut(typed)) {
            if (field && field.matches('[data-testid="stMain"] input[type="checkbox"]')) {
                // a switch or radio keeps the focus after a click (or gets it back when its run redraws it),
                // and the shortcuts ignore a key there: the key is sent again from the page itself
                field.blur();
                e.stopImmediatePropagation();
                e.preventDefault();
                if (!replay(typed)) retry({key: typed, pressedAt, at: performance.now(), pair: shownPair()});
                return;
            }
            if (!state.sent && !idle()) {
                // the page is drawing (its shortcuts may not listen yet): the key waits for the run to end
                // and acts on the pair it was pressed on (flush)
                e.stopImmediatePropagation();
                e.preventDefault();
                hold(typed, pressedAt);
                return;
            }
            if (state.sent) {  // the last key's rerun is under way: this one waits for it
                state.queued.push({key: typed, pressedAt});
                e.stopImmediatePropagation();
                e.preventDefault();
            } else if (sendLabel(typed, pressedAt)) {  // a label key, sent with its press time
                e.stopImmediatePropagation();
                e.preventDefault();
            } else if (labelKey(typed) && !state.replaying) {  // it waits for the component's script
                e.stopImmediatePropagation();
                e.preventDefault();
                hold(typed, pressedAt);
            } else {
                // to its button's shortcut, which takes it (the rerun under way) unless it does not listen yet
                // (drawn a moment before): then it waits, held, for the shortcut to listen
                const mark = state.sent = state.marked = performance.now();
                state.ran = false;
                if (e.isTrusted) {
                    const pair = shownPair();
                    setTimeout(() => {
                        if (e.defaultPrevented) return;
                        if (state.sent === mark) state.sent = 0;
                        retry({key: typed, pressedAt, at: mark, pair});
                    }, 0);
                }
            }
            return;
        }
        if (!e.isTrusted) return;
        const pane = main();
        const onWidget = field && field !== document.body && field.closest('[data-testid="stMain"]')
            && !field.matches('button');
        const step = {PageDown: 0.9, PageUp: -0.9, " ": e.shiftKey ? -0.9 : 0.9, ArrowDown: 0.1, ArrowUp: -0.1};
        if (pane && !onWidget && (e.key in step || e.key === "Home" || e.key === "End")
                && !(field && field.closest('[data-testid="stSidebar"], [data-testid="stDataFrame"]'))) {
            e.preventDefault();
            if (e.key === "Home") pane.scrollTo(0, 0);
            else if (e.key === "End") pane.scrollTo(0, pane.scrollHeight);
            else pane.scrollBy(0, step[e.key] * pane.clientHeight);
            return;
        }
        if (e.key === """
    + repr(DIFF_KEY)
    + """ && pane) {
            const change = firstChange();
            if (change && pane.scrollTop < 10) {
                pane.scrollBy(0, change.getBoundingClientRect().top - pane.getBoundingClientRect().top - 80);
            } else pane.scrollTo(0, 0);
            return;
        }
        // a label bar's key whose button is not drawn yet (a fresh page draws the bar's buttons after its run,
        // as their code loads, not all at once) or while the bar takes no key (its Skip not drawn or disabled)
        // waits for it
        const key = e.key.length === 1 ? e.key.toLowerCase() : "";
        if (/^[dnusz1-8jk]$/.test(key) && (!drawn(key) || !shortcut("s")) && onAudit()) {
            e.stopImmediatePropagation();
            hold(key, pressedAt);
        }
    }, true);
    document.addEventListener("click", e => {
        const sw = e.target.closest && e.target.closest('[data-testid="stMain"] [data-testid="stCheckbox"], '
            + '[data-testid="stMain"] label:has(input[type="checkbox"])');
        if (sw) setTimeout(() => document.activeElement?.blur(), 0);
    }, true);
}</script>"""
)

PAGE_KEYS_HINT = "**[** / **]** page before / next"
PAGE_KEYS_SCRIPT = """<script>if (!window.neardupPageKeys) {
    window.neardupPageKeys = true;
    // [ and ] open the page before / after the current one in the sidebar's menu (wrapping at the ends);
    // a key typed into a field stays text there
    document.addEventListener("keydown", e => {
        if (e.ctrlKey || e.metaKey || e.altKey || (e.key !== "[" && e.key !== "]")) return;
        const el = document.activeElement;
        if (el && (el.matches('input, textarea, select, [contenteditable="true"]') || el.isContentEditable)) return;
        const links = [...document.querySelectorAll('[data-testid="stSidebarNav"] a')];
        const here = links.findIndex(a => a.getAttribute('aria-current') === 'page'
            || new URL(a.href).pathname === location.pathname);
        if (here < 0 || links.length < 2) return;
        e.preventDefault();
        e.stopImmediatePropagation();
        links[(here + (e.key === "]" ? 1 : -1) + links.length) % links.length].click();
    }, true);
}</script>"""
