// The sandbox console: a Slack-like client for one person at a time, plus a look behind the
// scenes (the incident service's and the HR service's web apps, the event store, the bot's Slack
// API calls) and that person's phone (texts and calls from Switchboard). Everything a person does
// goes to the console server, which sends the bot the request Slack (or the communications service,
// or HR) would send.
import { escapeHtml, renderMessageBody, renderMrkdwn, renderView } from './blockKit.js';

const $ = (id) => document.getElementById(id);

const S = {
  me: '',
  data: null,
  /** `{ kind: 'channel', id }` or `{ kind: 'app', tab: 'home' | 'messages' }` */
  view: { kind: 'channel', id: '' },
  unread: new Set(),
  dismissed: new Set(),
  /** Threads opened (`channel:ts`), kept open across live re-renders. */
  openThreads: new Set(),
  modal: null,
  modalErrors: {},
  panel: 'pagerduty',
  pd: null,
  actAs: '',
  store: { mode: 'tail', streams: [], streamId: '', events: [], tail: [], filter: '' },
  calls: [],
  /** The phone of the person you are playing: `{ number, sms, calls }`. */
  phone: null,
  /** What is typed in the phone's reply box, kept across live re-renders. */
  phoneDraft: '',
  /** The HR service's web app (`GET /api/hr`), and the employee you act as there. */
  hr: null,
  hrActAs: '',
  /** The HR request form's fields as typed, kept across live re-renders. */
  hrDraft: {},
  /** The sandbox clock: how far it is ahead of this browser's clock (ms), and whether it can move. */
  clock: { skewMs: 0, movable: false },
  source: null,
};

// ------------------------------------------------------------------ helpers

const api = async (path, body) => {
  const res = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error ?? `${res.status} ${res.statusText}`);
  return json;
};

const toast = (text, kind = 'info') => {
  const el = document.createElement('div');
  el.className = `toast toast-${kind}`;
  el.textContent = text;
  $('toasts').append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 7000 : 3500);
};

const ctx = () => {
  const d = S.data;
  if (!d) return {};
  const users = {};
  for (const [id, u] of Object.entries(d.users)) users[id] = { name: u.realName || u.name, isBot: u.isBot };
  const channels = {};
  for (const c of d.channels) channels[c.id] = { name: c.isIm ? 'Switchboard' : c.name, isIm: c.isIm };
  return { users, channels, people: d.people.map((p) => ({ id: p.id, name: p.realName })) };
};

const tsKey = (ts) => {
  const [s, f] = String(ts).split('.');
  return Number(s) * 1e6 + Number(f ?? 0);
};
const timeOfTs = (ts) =>
  new Date(Number(String(ts).split('.')[0]) * 1000).toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
  });
const timeOfIso = (iso) =>
  new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

const initials = (name) =>
  name
    .split(/\s+/)
    .map((w) => w[0] ?? '')
    .join('')
    .slice(0, 2)
    .toUpperCase();
const hue = (id) => [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 360, 7);

const person = (id) => S.data?.people.find((p) => p.id === id);
const nameOf = (id) => person(id)?.realName ?? S.data?.users[id]?.realName ?? id;
const dmId = () => S.data?.channels.find((c) => c.isIm && c.user === S.me)?.id;
const currentChannel = () =>
  S.view.kind === 'channel' ? S.view.id : S.view.tab === 'messages' ? dmId() : undefined;

// ------------------------------------------------------------------ Slack side: sidebar

const renderSidebar = () => {
  const d = S.data;
  if (!d) return;
  $('workspace').textContent = d.team.name;
  $('channels').innerHTML = d.channels
    .filter((c) => !c.isIm)
    .map(
      (c) =>
        `<li><button type="button" class="side-item${S.view.kind === 'channel' && S.view.id === c.id ? ' active' : ''}${S.unread.has(c.id) ? ' unread' : ''}" data-channel="${escapeHtml(c.id)}"><span class="hash">#</span> ${escapeHtml(c.name)}</button></li>`,
    )
    .join('');
  const dm = dmId();
  $('apps').innerHTML =
    `<li><button type="button" class="side-item${S.view.kind === 'app' ? ' active' : ''}${dm && S.unread.has(dm) ? ' unread' : ''}" data-app="switchboard"><span class="app-dot">⚡</span> Switchboard</button></li>`;
};

const renderHeader = () => {
  const header = $('center-header');
  const tabs = $('app-tabs');
  if (S.view.kind === 'channel') {
    const c = S.data?.channels.find((x) => x.id === S.view.id);
    header.innerHTML = `<h1># ${escapeHtml(c?.name ?? '')}</h1><span class="header-hint">Messages, cards and replies from Switchboard. Replies only you can see are marked.</span>`;
    tabs.hidden = true;
  } else {
    header.innerHTML = `<h1><span class="app-dot">⚡</span> Switchboard <span class="app-badge">APP</span></h1><span class="header-hint">The app's Home tab and your direct messages with it.</span>`;
    tabs.hidden = false;
    const app = S.data?.app ?? {};
    for (const b of tabs.querySelectorAll('.app-tab')) {
      b.classList.toggle('active', b.dataset.tab === S.view.tab);
      b.hidden = b.dataset.tab === 'home' ? !app.homeTab : !app.messagesTab;
    }
  }
  const channel = currentChannel();
  const c = S.data?.channels.find((x) => x.id === channel);
  $('composer-input').placeholder = c ? (c.isIm ? 'Message Switchboard' : `Message #${c.name}`) : '';
  const inApp = S.view.kind === 'app';
  const readOnly = inApp && S.view.tab === 'messages' && S.data?.app?.messagesTabReadOnly === true;
  $('composer').hidden = (inApp && S.view.tab === 'home') || readOnly;
  $('composer-off').hidden = !readOnly;
};

// ------------------------------------------------------------------ messages

/** A card's colour bar, from the status emoji the bot puts in it (like an attachment's `color`). */
const accentOf = (m) => {
  const text = m.blocks ? JSON.stringify(m.blocks) : '';
  if (text.includes(':red_circle:')) return 'red';
  if (text.includes(':large_yellow_circle:')) return 'yellow';
  if (text.includes(':white_check_mark:')) return 'green';
  if (text.includes(':x:') || text.includes(':warning:')) return 'grey';
  return '';
};

const messageHtml = (m, ephemeral) => {
  const isBot = ephemeral ? m.via !== 'slackbot' : Boolean(m.botId);
  const slackbot = ephemeral && m.via === 'slackbot';
  const author = slackbot ? 'Slackbot' : isBot ? 'Switchboard' : nameOf(m.user);
  const avatar = slackbot
    ? '<div class="avatar avatar-slackbot">✱</div>'
    : isBot
      ? '<div class="avatar avatar-bot">⚡</div>'
      : `<div class="avatar" style="background:hsl(${hue(m.user)} 45% 42%)">${escapeHtml(initials(author))}</div>`;
  const badge = isBot && !slackbot ? '<span class="app-badge">APP</span>' : '';
  const edited = !ephemeral && m.edits > 0 ? '<span class="edited">(edited)</span>' : '';
  const only = ephemeral
    ? `<div class="only-you"><span aria-hidden="true">👁</span> Only visible to you <button type="button" class="linklike" data-dismiss="${escapeHtml(m.ts)}">Dismiss</button></div>`
    : '';
  const reply = !ephemeral && Boolean(m.threadTs);
  const kind = ephemeral ? 'ephemeral' : reply ? 'reply' : 'message';
  const accent = accentOf(m);
  return `<article class="msg${ephemeral ? ' ephemeral' : ''}${reply ? ' thread-reply' : ''}" data-surface-kind="${kind}" data-channel="${escapeHtml(m.channel)}" data-ts="${escapeHtml(m.ts)}">
    ${avatar}
    <div class="msg-main">
      ${only}
      <div class="msg-meta"><span class="author">${escapeHtml(author)}</span>${badge}<time>${timeOfTs(m.ts)}</time>${edited}</div>
      <div class="msg-body${accent ? ` accent-${accent}` : ''}">${renderMessageBody(m, ctx())}</div>
      ${reply || ephemeral ? '' : threadHtml(m)}
    </div>
  </article>`;
};

/** A thread's replies under their parent, folded like Slack's "N replies" (open ones stay open). */
const threadHtml = (parent) => {
  const replies = (S.data?.messages[parent.channel] ?? []).filter(
    (r) => r.threadTs === parent.ts && !r.deleted,
  );
  if (replies.length === 0) return '';
  const open = S.openThreads.has(`${parent.channel}:${parent.ts}`) ? ' open' : '';
  const n = replies.length;
  return `<details class="thread" data-thread="${escapeHtml(parent.ts)}"${open}>
    <summary>${n} ${n === 1 ? 'reply' : 'replies'}</summary>
    ${replies.map((r) => messageHtml(r, false)).join('')}
  </details>`;
};

const timeline = (channel) => {
  const d = S.data;
  // Replies are shown in their parent's thread, not in the channel (as in Slack).
  const msgs = (d.messages[channel] ?? [])
    .filter((m) => !m.deleted && !m.threadTs)
    .map((m) => ({ m, eph: false }));
  const eph = d.ephemerals
    .filter((e) => e.channel === channel && !S.dismissed.has(e.ts) && (e.text || e.blocks))
    .map((m) => ({ m, eph: true }));
  return [...msgs, ...eph].sort((a, b) => tsKey(a.m.ts) - tsKey(b.m.ts));
};

const renderMessages = () => {
  const box = $('messages');
  const home = $('home');
  if (S.view.kind === 'app' && S.view.tab === 'home') {
    box.hidden = true;
    home.hidden = false;
    renderHome();
    return;
  }
  home.hidden = true;
  box.hidden = false;
  const channel = currentChannel();
  if (!channel || !S.data) {
    box.innerHTML = '';
    return;
  }
  const items = timeline(channel);
  const c = S.data.channels.find((x) => x.id === channel);
  const intro = `<div class="channel-intro">${c?.isIm ? 'This is the very beginning of your direct messages with <b>Switchboard</b>.' : `This is the very beginning of <b>#${escapeHtml(c?.name ?? '')}</b>.`}</div>`;
  box.innerHTML = intro + items.map((x) => messageHtml(x.m, x.eph)).join('');
  box.scrollTop = box.scrollHeight;
};

const renderHome = () => {
  const home = $('home');
  const view = S.data?.home;
  if (!view) {
    home.innerHTML = `<div class="empty">Switchboard has not published a Home tab for you yet.<br><small>Opening this tab sends the app an <code>app_home_opened</code> event.</small></div>`;
    return;
  }
  const r = renderView(view.view, ctx());
  home.innerHTML = `<div class="home-view" data-surface-kind="view" data-view-id="${escapeHtml(view.id)}">${r.body}</div>`;
};

const upsertMessage = (change, m) => {
  S.data.messages[m.channel] ??= [];
  const list = S.data.messages[m.channel];
  const i = list.findIndex((x) => x.ts === m.ts);
  if (i >= 0) list[i] = m;
  else list.push(m);
  if (m.channel !== currentChannel()) {
    if (change === 'message.posted') {
      S.unread.add(m.channel);
      renderSidebar();
    }
    return;
  }
  const box = $('messages');
  if (m.threadTs) {
    // A reply: its parent is drawn again with its thread.
    const parent = list.find((x) => x.ts === m.threadTs);
    const at = box.querySelector(`.msg[data-surface-kind="message"][data-ts="${CSS.escape(m.threadTs)}"]`);
    if (parent && at) at.outerHTML = messageHtml(parent, false);
    return;
  }
  const el = box.querySelector(`.msg[data-surface-kind="message"][data-ts="${CSS.escape(m.ts)}"]`);
  if (m.deleted) {
    el?.remove();
    return;
  }
  if (el) {
    el.outerHTML = messageHtml(m, false);
    const fresh = box.querySelector(`.msg[data-surface-kind="message"][data-ts="${CSS.escape(m.ts)}"]`);
    fresh?.classList.add('flash');
  } else {
    appendToTimeline(messageHtml(m, false));
  }
};

const appendToTimeline = (html) => {
  const box = $('messages');
  const nearBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 160;
  box.insertAdjacentHTML('beforeend', html);
  if (nearBottom) box.scrollTop = box.scrollHeight;
};

/** A slash command's answer replaced in place (`replace_original` through its response_url). */
const updateEphemeral = (e) => {
  const i = S.data.ephemerals.findIndex((x) => x.channel === e.channel && x.ts === e.ts);
  if (i >= 0) S.data.ephemerals[i] = e;
  else S.data.ephemerals.push(e);
  const old = document.querySelector(
    `article[data-surface-kind="ephemeral"][data-channel="${CSS.escape(e.channel)}"][data-ts="${CSS.escape(e.ts)}"]`,
  );
  if (old) old.outerHTML = messageHtml(e, true);
};

const addEphemeral = (e) => {
  S.data.ephemerals.push(e);
  if (!e.text && !e.blocks) return;
  if (e.channel === currentChannel()) appendToTimeline(messageHtml(e, true));
  else {
    S.unread.add(e.channel);
    renderSidebar();
  }
};

// ------------------------------------------------------------------ interactions

const surfaceOf = (el) => {
  const host = el.closest('[data-surface-kind]');
  if (!host) return undefined;
  const kind = host.dataset.surfaceKind;
  if (kind === 'view') return { kind: 'view', viewId: host.dataset.viewId };
  return { kind, channel: host.dataset.channel, ts: host.dataset.ts };
};

const confirmDialog = (confirm) =>
  new Promise((resolve) => {
    if (!confirm) return resolve(true);
    $('confirm-title').textContent = confirm.title?.text ?? 'Are you sure?';
    $('confirm-text').innerHTML = renderMrkdwn(confirm.text?.text ?? '', ctx());
    $('confirm-ok').textContent = confirm.confirm?.text ?? 'Yes';
    $('confirm-deny').textContent = confirm.deny?.text ?? 'Cancel';
    $('confirm-ok').className = `bk-button ${confirm.style === 'danger' ? 'bk-danger' : 'bk-primary'}`;
    $('confirm-overlay').hidden = false;
    const done = (ok) => {
      $('confirm-overlay').hidden = true;
      $('confirm-ok').onclick = null;
      $('confirm-deny').onclick = null;
      resolve(ok);
    };
    $('confirm-ok').onclick = () => done(true);
    $('confirm-deny').onclick = () => done(false);
  });

/** Raw values of the inputs of a view form (block_id → action_id → value or values). */
const formValues = (root) => {
  const values = {};
  for (const box of root.querySelectorAll('.bk-input[data-block-id]')) {
    const actionId = box.dataset.actionId;
    if (!actionId) continue;
    const type = box.dataset.type;
    let raw = null;
    if (type === 'radio_buttons') raw = box.querySelector('input[type=radio]:checked')?.value ?? null;
    else if (type === 'checkboxes')
      raw = [...box.querySelectorAll('input[type=checkbox]:checked')].map((i) => i.value);
    else {
      const control = box.querySelector('select, input, textarea');
      if (control?.tagName === 'SELECT' && control.multiple)
        raw = [...control.selectedOptions].map((o) => o.value);
      else raw = control?.value ?? null;
    }
    values[box.dataset.blockId] = { [actionId]: raw };
  }
  return values;
};

const sendAction = async (control, value) => {
  const block = control.closest('.bk[data-block-index]');
  const surface = surfaceOf(control);
  if (!block || !surface) return;
  if (control.dataset.confirm) {
    const ok = await confirmDialog(JSON.parse(control.dataset.confirm));
    if (!ok) {
      if (control.tagName === 'SELECT') control.selectedIndex = 0;
      return;
    }
  }
  const body = {
    user: S.me,
    surface,
    blockIndex: Number(block.dataset.blockIndex),
    elementIndex: control.dataset.element === 'accessory' ? 'accessory' : Number(control.dataset.element),
    value,
  };
  if (surface.kind === 'view') {
    const root = control.closest('[data-surface-kind="view"]');
    body.values = root ? formValues(root) : {};
  }
  control.classList.add('busy');
  if (control.tagName === 'BUTTON') control.disabled = true;
  try {
    const r = await api('/api/action', body);
    if (!r.ok) toast(`Switchboard didn't answer that click (${r.error ?? r.status}).`, 'error');
  } catch (e) {
    toast(e.message, 'error');
  } finally {
    control.classList.remove('busy');
    if (control.tagName === 'BUTTON' && control.isConnected) control.disabled = false;
    if (control.dataset.type === 'overflow' && control.isConnected) control.selectedIndex = 0;
  }
};

// A thread opened or folded stays so when its parent is drawn again.
document.addEventListener(
  'toggle',
  (ev) => {
    const d = ev.target;
    if (!(d instanceof HTMLDetailsElement) || !d.classList.contains('thread')) return;
    const host = d.closest('.msg');
    const key = `${host?.dataset.channel}:${d.dataset.thread}`;
    if (d.open) S.openThreads.add(key);
    else S.openThreads.delete(key);
  },
  true,
);

document.addEventListener('click', (ev) => {
  const t = ev.target;
  if (!(t instanceof Element)) return;
  const button = t.closest('button[data-action-id]');
  if (button && !button.closest('.bk-input')) {
    if (button.dataset.url) window.open(button.dataset.url, '_blank', 'noopener');
    void sendAction(button, undefined);
    return;
  }
  const dismiss = t.closest('[data-dismiss]');
  if (dismiss) {
    S.dismissed.add(dismiss.dataset.dismiss);
    dismiss.closest('.msg')?.remove();
    return;
  }
  const channel = t.closest('[data-channel].side-item');
  if (channel) return select({ kind: 'channel', id: channel.dataset.channel });
  if (t.closest('[data-app]')) {
    const tab = S.view.kind === 'app' ? S.view.tab : S.data?.app?.homeTab ? 'home' : 'messages';
    return select({ kind: 'app', tab });
  }
  const tab = t.closest('.app-tab');
  if (tab) return select({ kind: 'app', tab: tab.dataset.tab });
  const mention = t.closest('.mk-channel[data-channel]');
  if (mention && S.data?.channels.some((c) => c.id === mention.dataset.channel && !c.isIm)) {
    return select({ kind: 'channel', id: mention.dataset.channel });
  }
});

document.addEventListener('change', (ev) => {
  const t = ev.target;
  if (!(t instanceof Element) || t.closest('.bk-input')) return;
  const dropdown = t.closest('select[data-action-id]');
  if (dropdown) {
    const value = dropdown.multiple ? [...dropdown.selectedOptions].map((o) => o.value) : dropdown.value;
    if (value === '') return;
    void sendAction(dropdown, value);
    return;
  }
  const picker = t.closest('input[data-action-id]');
  if (picker) return void sendAction(picker, picker.value);
  const choices = t.closest('.bk-choices[data-action-id]');
  if (choices) {
    const checked = [...choices.querySelectorAll('input:checked')].map((i) => i.value);
    void sendAction(choices, choices.dataset.type === 'radio_buttons' ? (checked[0] ?? null) : checked);
  }
});

const select = (view) => {
  S.view = view;
  const channel = currentChannel();
  if (channel) S.unread.delete(channel);
  renderSidebar();
  renderHeader();
  renderMessages();
  if (view.kind === 'app' && view.tab === 'home') {
    api('/api/home/open', { user: S.me }).catch((e) => toast(e.message, 'error'));
  }
  if (view.kind === 'channel') localStorage.setItem('sandbox.channel', view.id);
};

// ------------------------------------------------------------------ composer

const COMMANDS = [
  ['/incident help', 'what /incident can do'],
  ['/incident trigger ', '<service> <title>, or no arguments for a form'],
  ['/incident list', 'open incidents'],
  ['/incident show ', '<id or number>'],
  ['/incident ack ', '<id or number>'],
  ['/incident resolve ', '<id or number> [resolution]'],
  ['/incident timeline ', '<id or number>'],
  ['/oncall', '[service, schedule or @user]'],
  ['/verify ', '<your phone number>: the code arrives in the Phone tab'],
  ['/verify status', 'your number and where its verification stands'],
  ['/verify test', 'a test text and call to your verified number'],
  ['/verify help', 'phone verification'],
  ['/timeoff', 'ask for time off (a form), or /timeoff <policy> <first day> <last day> [note]'],
  ['/timeoff status', 'your time-off requests and where they stand'],
  ['/timeoff balance', '[policy]: what is left this year'],
  ['/timeoff help', 'time off'],
  ['/whosout', '[date or range]'],
];

const renderSuggest = () => {
  const input = $('composer-input');
  const text = input.value;
  const box = $('suggest');
  if (!text.startsWith('/') || text.includes('  ')) {
    box.hidden = true;
    return;
  }
  const matches = COMMANDS.filter(
    ([c]) => c.startsWith(text.toLowerCase()) && c.trim() !== text.trim(),
  ).slice(0, 7);
  box.hidden = matches.length === 0;
  box.innerHTML = matches
    .map(
      ([c, hint]) =>
        `<button type="button" class="suggest-item" data-fill="${escapeHtml(c)}"><b>${escapeHtml(c.trim())}</b> <span>${escapeHtml(hint)}</span></button>`,
    )
    .join('');
};

$('composer-input').addEventListener('input', renderSuggest);
$('suggest').addEventListener('click', (ev) => {
  const item = ev.target instanceof Element ? ev.target.closest('[data-fill]') : null;
  if (!item) return;
  $('composer-input').value = item.dataset.fill;
  $('composer-input').focus();
  renderSuggest();
});

$('composer').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const input = $('composer-input');
  const text = input.value.trim();
  const channel = currentChannel();
  if (!text || !channel) return;
  input.disabled = true;
  $('suggest').hidden = true;
  const started = performance.now();
  try {
    if (text.startsWith('/')) {
      const r = await api('/api/slash', { user: S.me, channel, text });
      const ms = Math.round(performance.now() - started);
      const command = text.split(/\s/)[0];
      $('composer-status').textContent = r.ok
        ? `${command} sent to Switchboard, signed · answered ${r.status} in ${ms} ms`
        : `${command} failed: ${r.error}`;
    } else {
      await api('/api/message', { user: S.me, channel, text });
      $('composer-status').textContent = '';
    }
    input.value = '';
  } catch (e) {
    toast(e.message, 'error');
  } finally {
    input.disabled = false;
    input.focus();
  }
});

// ------------------------------------------------------------------ modals

const showModal = (view) => {
  S.modal = view;
  S.modalErrors = {};
  const overlay = $('modal-overlay');
  if (!view) {
    overlay.hidden = true;
    return;
  }
  const r = renderView(view.view, ctx());
  $('modal-title').textContent = r.title;
  $('modal-body').innerHTML =
    `<div data-surface-kind="view" data-view-id="${escapeHtml(view.id)}">${r.body}</div>`;
  $('modal-close').textContent = r.close;
  $('modal-submit').textContent = r.submit ?? 'Submit';
  $('modal-submit').hidden = r.submit === undefined && !view.view.blocks?.some((b) => b.type === 'input');
  $('modal-banner').hidden = true;
  overlay.hidden = false;
  const first = $('modal-body').querySelector('input, textarea, select');
  first?.focus();
};

const showModalErrors = (errors) => {
  for (const box of $('modal-body').querySelectorAll('.bk-input')) {
    box.classList.remove('bk-has-error');
    box.querySelector('.bk-error')?.remove();
    const message = errors[box.dataset.blockId];
    if (message) {
      box.classList.add('bk-has-error');
      const div = document.createElement('div');
      div.className = 'bk-error';
      div.setAttribute('role', 'alert');
      div.textContent = message;
      box.append(div);
    }
  }
};

$('modal').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!S.modal) return;
  const submit = $('modal-submit');
  submit.disabled = true;
  submit.classList.add('busy');
  try {
    const r = await api('/api/views/submit', {
      user: S.me,
      viewId: S.modal.id,
      values: formValues($('modal-body')),
    });
    if (!r.ok) {
      $('modal-banner').textContent =
        `We had some trouble connecting to Switchboard (${r.error}). Try again?`;
      $('modal-banner').hidden = false;
    } else if (r.errors) {
      showModalErrors(r.errors);
    } else if (!r.modal) {
      showModal(null);
    } else if (r.modal.id !== S.modal.id || r.modal.hash !== S.modal.hash) {
      showModal(r.modal);
    }
  } catch (e) {
    toast(e.message, 'error');
  } finally {
    submit.disabled = false;
    submit.classList.remove('busy');
  }
});

const closeModal = async () => {
  if (!S.modal) return;
  const id = S.modal.id;
  showModal(null);
  await api('/api/views/close', { user: S.me, viewId: id }).catch((e) => toast(e.message, 'error'));
};
$('modal-close').addEventListener('click', closeModal);
$('modal-x').addEventListener('click', closeModal);
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && !$('modal-overlay').hidden && $('confirm-overlay').hidden) void closeModal();
});

// ------------------------------------------------------------------ side panel: incident service

const STATUS_LABEL = { triggered: 'Triggered', acknowledged: 'Acknowledged', resolved: 'Resolved' };

/** `Mon 30 Nov 07:00 – Mon 7 Dec 07:00 UTC`: a schedule's shift as its page shows it, in UTC (named). */
const utcSpan = (from, to) => {
  const f = (iso) =>
    new Date(iso).toLocaleString('en-GB', {
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: 'UTC',
    });
  return `${f(from)} – ${f(to)} UTC`;
};

const loadPagerDuty = async () => {
  S.pd = await api('/api/pagerduty');
  renderPagerDuty();
};

const personOption = (p, selected) =>
  `<option value="${escapeHtml(p.email)}"${p.email === selected ? ' selected' : ''}>${escapeHtml(p.name)}</option>`;

const renderPagerDuty = () => {
  const pd = S.pd;
  const box = $('panel-pagerduty');
  if (!pd) return;
  const mine = person(S.me)?.email;
  if (!S.actAs || !pd.people.some((p) => p.email === S.actAs)) S.actAs = mine ?? pd.people[0]?.email ?? '';
  const open = pd.incidents.filter((i) => i.status !== 'resolved');
  const resolved = pd.incidents.filter((i) => i.status === 'resolved');
  const row = (
    i,
  ) => `<li class="pd-incident pd-${i.status}" data-incident="${escapeHtml(i.id)}" data-testid="pd-incident-${i.number}">
      <div class="pd-line"><span class="pill pill-${i.status}">${STATUS_LABEL[i.status]}</span><span class="pd-num">#${i.number}</span><span class="pd-title">${escapeHtml(i.title)}</span></div>
      <div class="pd-sub">${escapeHtml(i.service.name)} · ${i.urgency === 'high' ? 'High' : 'Low'} urgency · ${i.assignees.length ? `assigned to ${escapeHtml(i.assignees.map((a) => a.name).join(', '))}` : 'unassigned'} · level ${i.escalationLevel}</div>
      <div class="pd-sub">Last change by ${escapeHtml(i.lastChangedBy)} at ${timeOfIso(i.updatedAt)}</div>
      ${
        i.status === 'resolved'
          ? ''
          : `<div class="pd-actions"><button type="button" class="bk-button small" data-pd-act="acknowledge"${i.status === 'acknowledged' ? ' disabled' : ''}>Acknowledge</button><button type="button" class="bk-button small" data-pd-act="resolve">Resolve</button></div>`
      }
    </li>`;
  const oncall = pd.onCall
    .map(
      (
        p,
      ) => `<div class="oc-policy"><div class="oc-name">${escapeHtml(p.name)} <span class="muted">· ${escapeHtml(p.services.join(', ') || 'no services')}</span></div>
      <ol class="oc-levels">${p.levels
        .map(
          (l) =>
            `<li><span class="oc-level">L${l.level}</span> ${l.targets
              .map((t) =>
                t.kind === 'user'
                  ? `<b>${escapeHtml(t.user?.name ?? '?')}</b>`
                  : `<b>${escapeHtml(t.now?.name ?? 'nobody')}</b> <span class="muted">(${escapeHtml(t.schedule.name)}${t.until ? ` until ${new Date(t.until).toLocaleString('en-GB', { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })} UTC` : ''}${t.next ? `, then ${escapeHtml(t.next.name)}` : ''})</span>`,
              )
              .join(
                ', ',
              )}${l.level < p.levels.length ? ` <span class="muted">· escalates after ${l.delayMinutes} min</span>` : ''}</li>`,
        )
        .join('')}</ol></div>`,
    )
    .join('');
  const schedules = (pd.schedules ?? [])
    .map(
      (
        s,
      ) => `<div class="oc-policy pd-schedule" data-testid="pd-schedule-${escapeHtml(s.id)}"><div class="oc-name">${escapeHtml(s.name)} <span class="muted">· ${escapeHtml(s.description)}</span></div>
      <div class="pd-sub">Overrides</div>
      <ul class="pd-overrides">${
        s.overrides
          .map(
            (o) =>
              `<li class="pd-override" data-testid="pd-override"><b>${escapeHtml(o.user?.name ?? '?')}</b> <span class="muted">${escapeHtml(utcSpan(o.start, o.end))}</span></li>`,
          )
          .join('') || '<li class="empty-row">No overrides.</li>'
      }</ul>
      <div class="pd-sub">Next shifts</div>
      <ol class="pd-shifts">${s.upcoming
        .slice(0, 6)
        .map(
          (e) =>
            `<li class="pd-shift" data-testid="pd-shift"><b>${escapeHtml(e.user?.name ?? 'nobody')}</b> <span class="muted">${escapeHtml(utcSpan(e.start, e.end))}</span></li>`,
        )
        .join('')}</ol></div>`,
    )
    .join('');
  const severityOptions = ['critical', 'error', 'warning', 'info']
    .map((s) => `<option value="${s}"${s === 'error' ? ' selected' : ''}>${s}</option>`)
    .join('');
  box.innerHTML = `
    <p class="panel-note">The incident service's own web app, as a person there would use it. Changes reach Switchboard as signed webhooks.</p>
    <label class="field-inline">Act as <select id="pd-act-as" aria-label="Act as">${pd.people.map((p) => personOption(p, S.actAs)).join('')}</select></label>
    <h3>Open incidents <span class="count">${open.length}</span></h3>
    <ul class="pd-list">${open.map(row).join('') || '<li class="empty-row">No open incidents.</li>'}</ul>
    ${resolved.length ? `<details class="pd-resolved"><summary>Resolved <span class="count">${resolved.length}</span></summary><ul class="pd-list">${resolved.map(row).join('')}</ul></details>` : ''}
    <h3>Trigger from monitoring</h3>
    <form class="pd-trigger" id="pd-trigger">
      <label>Service <select name="routingKey" aria-label="Monitoring service">${pd.services.map((s) => `<option value="${escapeHtml(s.routingKey)}">${escapeHtml(s.name)} · ${escapeHtml(s.description)}</option>`).join('')}</select></label>
      <label>Summary <input name="summary" required placeholder="CPU above 95% on api-3" aria-label="Alert summary"></label>
      <div class="row"><label>Severity <select name="severity">${severityOptions}</select></label>
      <button type="submit" class="bk-button bk-primary small">Send alert</button></div>
      <p class="muted small">Sent to the Events API (<code>POST /v2/enqueue</code>) with the service's routing key.</p>
    </form>
    <h3>On call now</h3>
    ${oncall}
    <h3>Schedules</h3>
    ${schedules}`;
  if (location.hash.startsWith('#incident=')) {
    const id = decodeURIComponent(location.hash.slice('#incident='.length));
    box.querySelector(`[data-incident="${CSS.escape(id)}"]`)?.classList.add('highlight');
  }
};

$('panel-pagerduty').addEventListener('change', (ev) => {
  if (ev.target instanceof HTMLSelectElement && ev.target.id === 'pd-act-as') S.actAs = ev.target.value;
});
$('panel-pagerduty').addEventListener('click', async (ev) => {
  const b = ev.target instanceof Element ? ev.target.closest('[data-pd-act]') : null;
  if (!b) return;
  const id = b.closest('[data-incident]')?.dataset.incident;
  b.disabled = true;
  try {
    await api(`/api/pagerduty/incidents/${encodeURIComponent(id)}/${b.dataset.pdAct}`, { email: S.actAs });
  } catch (e) {
    toast(`The incident service refused: ${e.message}`, 'error');
    b.disabled = false;
  }
});
$('panel-pagerduty').addEventListener('submit', async (ev) => {
  if (!(ev.target instanceof HTMLFormElement) || ev.target.id !== 'pd-trigger') return;
  ev.preventDefault();
  const form = new FormData(ev.target);
  try {
    const r = await api('/api/pagerduty/enqueue', {
      routingKey: form.get('routingKey'),
      summary: form.get('summary'),
      severity: form.get('severity'),
      source: 'sandbox console',
    });
    toast(`Alert accepted (dedup key ${r.dedup_key}).`);
    ev.target.reset();
  } catch (e) {
    toast(`The Events API refused: ${e.message}`, 'error');
  }
});

// ------------------------------------------------------------------ side panel: HR service

const HR_STATUS_LABEL = { pending: 'Pending', approved: 'Approved', canceled: 'Cancelled' };
const PORTION_LABEL = { morning: 'morning', afternoon: 'afternoon' };

const loadHr = async () => {
  S.hr = await api('/api/hr');
  renderHr();
};

/**
 * A calendar day as people read it: `Mon 7 Dec`, with the year when it is not this year's (days
 * carry no zone; the panel names UTC for today).
 */
const dayLabel = (date) =>
  new Date(`${date}T00:00:00Z`).toLocaleDateString('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    ...(S.hr && date.slice(0, 4) !== S.hr.today.slice(0, 4) ? { year: 'numeric' } : {}),
    timeZone: 'UTC',
  });
const rangeLabel = (from, to, fromPortion, toPortion) => {
  const first = `${dayLabel(from)}${PORTION_LABEL[fromPortion] ? ` (${PORTION_LABEL[fromPortion]})` : ''}`;
  if (from === to) return first;
  return `${first} – ${dayLabel(to)}${PORTION_LABEL[toPortion] ? ` (${PORTION_LABEL[toPortion]})` : ''}`;
};
const utcTime = (iso) =>
  `${new Date(iso).toLocaleString('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC' })} UTC`;

const renderHr = () => {
  const hr = S.hr;
  const box = $('panel-hr');
  if (!hr || S.panel !== 'hr') return;
  const employed = hr.employees.filter((e) => e.status === 'employed');
  const mine = employed.find((e) => e.email === person(S.me)?.email)?.id;
  if (!S.hrActAs || !employed.some((e) => e.id === S.hrActAs)) S.hrActAs = mine ?? employed[0]?.id ?? '';
  const absence = (a) =>
    `<li class="hr-absence" data-testid="hr-out-${a.requestId}"><b>${escapeHtml(a.employee.name)}</b> · ${escapeHtml(a.policyType)} · ${escapeHtml(rangeLabel(a.startDate, a.endDate))}${a.status === 'pending' ? ' <span class="muted">(pending approval)</span>' : ''}</li>`;
  const request = (
    r,
  ) => `<li class="hr-request hr-${r.status}" data-request="${r.id}" data-testid="hr-request-${r.id}">
      <div class="pd-line"><span class="pill pill-hr-${r.status}" data-testid="hr-status">${HR_STATUS_LABEL[r.status] ?? escapeHtml(r.status)}</span><span class="pd-title">${escapeHtml(r.employee.name)}</span><span class="muted">· ${escapeHtml(r.policyType)}</span><span class="hr-origin hr-origin-${r.madeIn}" data-testid="hr-origin">${r.madeIn === 'switchboard' ? 'made in Switchboard' : 'made in HR'}</span></div>
      <div class="pd-sub">${escapeHtml(rangeLabel(r.startDate, r.endDate, r.startPortion, r.endPortion))} · ${r.days} working day${r.days === 1 ? '' : 's'}</div>
      <div class="pd-sub">${r.approver ? `${r.approver.byManager ? 'Approver (manager)' : 'Approved by'}: ${escapeHtml(r.approver.name)}` : 'No approver'} · request ${r.id} · made ${escapeHtml(utcTime(r.createdAt))}</div>
      ${r.description ? `<div class="pd-sub">“${escapeHtml(r.description)}”</div>` : ''}
      ${r.status === 'canceled' ? '' : `<div class="pd-actions"><button type="button" class="bk-button small" data-hr-cancel="${r.id}">Cancel request</button></div>`}
    </li>`;
  const open = hr.requests.filter((r) => r.status !== 'canceled');
  const cancelled = hr.requests.filter((r) => r.status === 'canceled');
  const employee = (e) => `<li class="hr-employee hr-emp-${e.status}" data-testid="hr-employee-${e.id}">
      <div class="pd-line"><span class="pd-title">${escapeHtml(e.name)}</span><span class="muted">· ${escapeHtml(e.title)}</span>${e.status === 'terminated' ? '<span class="pill pill-hr-canceled">Terminated</span>' : ''}</div>
      <div class="pd-sub">${escapeHtml(e.department)} · ${escapeHtml(e.site)} · ${e.manager ? `reports to ${escapeHtml(e.manager.name)}` : 'no manager'}</div>
      ${e.status === 'employed' ? `<div class="pd-actions"><button type="button" class="bk-button small bk-danger" data-hr-terminate="${escapeHtml(e.id)}" data-name="${escapeHtml(e.name)}">Terminate</button></div>` : ''}
    </li>`;
  const today = hr.today;
  const draft = {
    policyType: '',
    startDate: today,
    endDate: today,
    startDatePortion: 'all_day',
    endDatePortion: 'all_day',
    description: '',
    ...S.hrDraft,
  };
  const option = (name, value, label) =>
    `<option value="${escapeHtml(value)}"${draft[name] === value ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  box.innerHTML = `
    <p class="panel-note">HR's own web app, as a person there would use it: it shows HR as it is now. HR's API shows changes to Switchboard up to <b data-testid="hr-lag">${hr.lagSeconds} s</b> late; HR also tells Switchboard through signed webhooks.</p>
    <label class="field-inline">Act as <select id="hr-act-as" aria-label="Act in HR as">${employed.map((e) => `<option value="${escapeHtml(e.id)}"${e.id === S.hrActAs ? ' selected' : ''}>${escapeHtml(e.name)}</option>`).join('')}</select></label>
    <h3>Request time off</h3>
    <form class="pd-trigger" id="hr-request" data-testid="hr-request-form">
      <label>Policy <select name="policyType" aria-label="Policy">${hr.policies.map((p) => option('policyType', p.name, `${p.name} · ${p.days} days a year`)).join('')}</select></label>
      <div class="row"><label>First day <input type="date" name="startDate" required aria-label="First day" value="${escapeHtml(draft.startDate)}"></label>
      <label>Last day <input type="date" name="endDate" required aria-label="Last day" value="${escapeHtml(draft.endDate)}"></label></div>
      <div class="row"><label>First day is <select name="startDatePortion" aria-label="First day portion">${option('startDatePortion', 'all_day', 'the whole day')}${option('startDatePortion', 'afternoon', 'the afternoon only')}</select></label>
      <label>Last day is <select name="endDatePortion" aria-label="Last day portion">${option('endDatePortion', 'all_day', 'the whole day')}${option('endDatePortion', 'morning', 'the morning only')}</select></label></div>
      <label>Note <input name="description" maxlength="500" placeholder="Family trip" aria-label="Note" value="${escapeHtml(draft.description)}"></label>
      <div class="row"><span class="muted small">Waits for the manager's approval in HR.</span><button type="submit" class="bk-button bk-primary small">Request</button></div>
    </form>
    <h3>Out today <span class="muted small">${escapeHtml(dayLabel(today))} (UTC)</span> <span class="count">${hr.outToday.length}</span></h3>
    <ul class="hr-out" data-testid="hr-out-today">${hr.outToday.map(absence).join('') || '<li class="empty-row">Nobody is out today.</li>'}</ul>
    <h3>Out this week <span class="muted small">${escapeHtml(rangeLabel(hr.week.from, hr.week.to))} (UTC)</span> <span class="count">${hr.outThisWeek.length}</span></h3>
    <ul class="hr-out" data-testid="hr-out-week">${hr.outThisWeek.map(absence).join('') || '<li class="empty-row">Nobody is out this week.</li>'}</ul>
    <h3>Time-off requests <span class="count">${open.length}</span></h3>
    <ul class="pd-list" data-testid="hr-requests">${open.map(request).join('') || '<li class="empty-row">No time-off requests.</li>'}</ul>
    ${cancelled.length ? `<details class="pd-resolved"><summary>Cancelled <span class="count">${cancelled.length}</span></summary><ul class="pd-list">${cancelled.map(request).join('')}</ul></details>` : ''}
    <h3>Employees <span class="count">${employed.length}</span></h3>
    <ul class="pd-list">${hr.employees.map(employee).join('')}</ul>`;
};

$('panel-hr').addEventListener('change', (ev) => {
  if (ev.target instanceof HTMLSelectElement && ev.target.id === 'hr-act-as') S.hrActAs = ev.target.value;
});
const keepHrDraft = (ev) => {
  const el = ev.target;
  if ((el instanceof HTMLInputElement || el instanceof HTMLSelectElement) && el.form?.id === 'hr-request')
    S.hrDraft = { ...S.hrDraft, [el.name]: el.value };
};
$('panel-hr').addEventListener('input', keepHrDraft);
$('panel-hr').addEventListener('change', keepHrDraft);
$('panel-hr').addEventListener('click', async (ev) => {
  const target = ev.target instanceof Element ? ev.target : null;
  const cancel = target?.closest('[data-hr-cancel]');
  const terminate = target?.closest('[data-hr-terminate]');
  if (!cancel && !terminate) return;
  const b = cancel ?? terminate;
  if (terminate) {
    const ok = await confirmDialog({
      title: { text: 'Terminate employee?' },
      text: {
        text: `${terminate.dataset.name} leaves the company in HR; Switchboard hears of it by webhook.`,
      },
      confirm: { text: 'Terminate' },
      style: 'danger',
    });
    if (!ok) return;
  }
  b.disabled = true;
  try {
    if (cancel) await api(`/api/hr/requests/${encodeURIComponent(cancel.dataset.hrCancel)}/cancel`, {});
    else await api(`/api/hr/employees/${encodeURIComponent(terminate.dataset.hrTerminate)}/terminate`, {});
    await loadHr();
  } catch (e) {
    toast(`HR refused: ${e.message}`, 'error');
    b.disabled = false;
  }
});
$('panel-hr').addEventListener('submit', async (ev) => {
  if (!(ev.target instanceof HTMLFormElement) || ev.target.id !== 'hr-request') return;
  ev.preventDefault();
  const form = new FormData(ev.target);
  try {
    const r = await api('/api/hr/requests', {
      employeeId: S.hrActAs,
      policyType: form.get('policyType'),
      startDate: form.get('startDate'),
      endDate: form.get('endDate'),
      startDatePortion: form.get('startDatePortion'),
      endDatePortion: form.get('endDatePortion'),
      description: form.get('description'),
    });
    toast(`Requested in HR (request ${r.requestId}); it waits for the manager.`);
    S.hrDraft = { ...S.hrDraft, description: '' };
    await loadHr();
  } catch (e) {
    // The console's refusals of a request already say who refused and why.
    toast(e.message, 'error');
  }
});

// ------------------------------------------------------------------ side panel: event store

const actorName = (actor) => (actor && S.data?.users[actor] ? nameOf(actor) : (actor ?? '—'));

const eventRow = (e, withStream) => `<li class="ev-row">
  <details>
    <summary>
      <span class="ev-type">${escapeHtml(e.type)}</span>
      <span class="kind kind-${escapeHtml(e.kind)}">${escapeHtml(e.kind)}</span>
      ${withStream ? `<button type="button" class="linklike ev-stream" data-stream="${escapeHtml(e.streamId)}">${escapeHtml(e.streamId)}</button>` : `<span class="muted">#${e.revision}</span>`}
      <span class="ev-meta"><span class="ev-actor" title="actor">${escapeHtml(actorName(e.actor))}</span> · <time>${timeOfIso(e.recordedAt)}</time></span>
    </summary>
    <pre class="json">${escapeHtml(JSON.stringify({ data: e.data, metadata: e.metadata, position: e.position, revision: e.revision }, null, 2))}</pre>
  </details>
</li>`;

const renderStore = () => {
  const st = S.store;
  const box = $('panel-store');
  const tabs = `<div class="sub-tabs">
    <button type="button" class="sub-tab${st.mode === 'tail' ? ' active' : ''}" data-store-mode="tail">Live tail</button>
    <button type="button" class="sub-tab${st.mode !== 'tail' ? ' active' : ''}" data-store-mode="streams">Streams</button>
  </div>`;
  let body = '';
  if (st.mode === 'tail') {
    body = `<p class="panel-note">Every event appended to the store, newest first, as it happens.</p>
      <ul class="ev-list" data-testid="store-tail">${st.tail.map((e) => eventRow(e, true)).join('') || '<li class="empty-row">Nothing yet: do something in Slack.</li>'}</ul>`;
  } else if (st.mode === 'streams') {
    const f = st.filter.toLowerCase();
    body = `<input class="filter" id="stream-filter" placeholder="Filter streams (inbox-, incident-, …)" aria-label="Filter streams" value="${escapeHtml(st.filter)}">
      <ul class="stream-list" data-testid="store-streams">${st.streams
        .filter((s) => s.streamId.toLowerCase().includes(f))
        .map(
          (s) =>
            `<li><button type="button" class="stream-item" data-stream="${escapeHtml(s.streamId)}"><span>${escapeHtml(s.streamId)}</span><span class="muted">${s.events} event${s.events === 1 ? '' : 's'} · ${timeOfIso(s.lastRecordedAt)}</span></button></li>`,
        )
        .join('')}</ul>`;
  } else {
    body = `<div class="stream-head"><button type="button" class="linklike" data-store-mode="streams">← Streams</button> <b>${escapeHtml(st.streamId)}</b></div>
      <ul class="ev-list" data-testid="store-stream">${st.events.map((e) => eventRow(e, false)).join('')}</ul>`;
  }
  box.innerHTML = tabs + body;
  const filter = $('stream-filter');
  if (filter) {
    filter.addEventListener('input', () => {
      st.filter = filter.value;
      const pos = filter.selectionStart;
      renderStore();
      $('stream-filter').focus();
      $('stream-filter').setSelectionRange(pos, pos);
    });
  }
};

const openStream = async (streamId) => {
  S.store.mode = 'stream';
  S.store.streamId = streamId;
  S.store.events = await api(`/api/store/stream?id=${encodeURIComponent(streamId)}`);
  renderStore();
};

$('panel-store').addEventListener('click', async (ev) => {
  const t = ev.target instanceof Element ? ev.target : null;
  const mode = t?.closest('[data-store-mode]');
  if (mode) {
    S.store.mode = mode.dataset.storeMode;
    if (S.store.mode === 'streams') S.store.streams = await api('/api/store/streams');
    renderStore();
    return;
  }
  const stream = t?.closest('[data-stream]');
  if (stream) {
    ev.preventDefault();
    await openStream(stream.dataset.stream);
  }
});

const onStoreEvent = (row) => {
  const st = S.store;
  st.tail.unshift(row);
  st.tail.length = Math.min(st.tail.length, 200);
  if (st.mode === 'stream' && row.streamId === st.streamId) st.events.push(row);
  if (st.mode === 'streams') {
    const s = st.streams.find((x) => x.streamId === row.streamId);
    if (s) {
      s.events = row.revision + 1;
      s.lastRecordedAt = row.recordedAt;
    } else
      st.streams.unshift({
        streamId: row.streamId,
        events: row.revision + 1,
        lastRecordedAt: row.recordedAt,
      });
  }
  if (S.panel === 'store') {
    const open = new Set(
      [...$('panel-store').querySelectorAll('details[open] .ev-type')].map((x) => x.textContent),
    );
    if (open.size === 0) renderStore();
  }
};

// ------------------------------------------------------------------ side panel: Slack API calls

const renderCalls = () => {
  $('panel-calls').innerHTML =
    `<p class="panel-note">Web API calls Switchboard made to (fake) Slack, newest first.</p>
    <ul class="call-list">${S.calls
      .slice()
      .reverse()
      .map(
        (c) =>
          `<li><code>${escapeHtml(c.method)}</code> <span class="${c.error ? 'bad' : 'good'}">${c.error ? escapeHtml(c.error) : 'ok'}</span> <time class="muted">${timeOfIso(new Date(c.at).toISOString())}</time></li>`,
      )
      .join('')}</ul>`;
};

// ------------------------------------------------------------------ side panel: the phone

const CALL_LABEL = {
  ringing: 'Incoming call',
  answered: 'On a call',
  completed: 'Call ended',
  rejected: 'Declined',
  unanswered: 'Missed call',
  timeout: 'Missed call',
  busy: 'Busy',
  failed: 'Call failed',
  cancelled: 'Cancelled',
};
const LIVE_CALL = new Set(['ringing', 'answered']);

/** `+447700900101` → `+44 7700 900101`; other numbers as they are. */
const showNumber = (n) =>
  n && /^\+447\d{9}$/.test(n) ? `${n.slice(0, 3)} ${n.slice(3, 7)} ${n.slice(7)}` : (n ?? '');

const loadPhone = async () => {
  S.phone = await api(`/api/phone?user=${encodeURIComponent(S.me)}`);
  renderPhone();
};

const keypad = () =>
  `<div class="keypad" role="group" aria-label="Keypad">${[
    '1',
    '2',
    '3',
    '4',
    '5',
    '6',
    '7',
    '8',
    '9',
    '*',
    '0',
    '#',
  ]
    .map((k) => `<button type="button" class="key" data-key="${k}" aria-label="Key ${k}">${k}</button>`)
    .join('')}</div>`;

const callHtml = (c) => {
  const spoken = c.spoken.length
    ? `<div class="call-says" data-testid="call-says">${c.spoken.map((t) => `<p>“${escapeHtml(t)}”</p>`).join('')}</div>`
    : '';
  const keys = c.keys
    .map(
      (
        k,
      ) => `<li class="call-key"><span>You pressed <b>${escapeHtml(k.digits)}</b> at ${timeOfIso(k.at)}</span>
        ${k.answer ? `<details open><summary>Switchboard answered (NCCO)</summary><pre class="json" data-testid="call-ncco">${escapeHtml(JSON.stringify(k.answer, null, 2))}</pre></details>` : '<span class="muted">waiting for Switchboard…</span>'}</li>`,
    )
    .join('');
  let actions = '';
  if (c.status === 'ringing')
    actions = `<div class="call-actions"><button type="button" class="bk-button bk-primary small" data-call-act="answer">Answer</button><button type="button" class="bk-button bk-danger small" data-call-act="reject">Decline</button></div>`;
  else if (c.status === 'answered')
    actions = `${c.awaitingKeys ? keypad() : ''}<div class="call-actions"><button type="button" class="bk-button bk-danger small" data-call-act="hangup">Hang up</button></div>`;
  return `<li class="phone-call call-${escapeHtml(c.status)}" data-call="${escapeHtml(c.id)}" data-testid="phone-call">
    <div class="call-head"><span class="call-icon" aria-hidden="true">📞</span> <b>${escapeHtml(CALL_LABEL[c.status] ?? c.status)}</b> <span class="muted">from ${escapeHtml(showNumber(c.from))} · ${timeOfIso(c.startedAt)}</span></div>
    ${spoken}
    ${keys ? `<ul class="call-keys">${keys}</ul>` : ''}
    ${actions}
  </li>`;
};

const renderPhone = () => {
  const box = $('panel-phone');
  const ph = S.phone;
  $('phone-tab').classList.toggle('ringing', ph?.calls.some((c) => c.status === 'ringing') ?? false);
  if (S.panel !== 'phone') return;
  if (!ph) {
    box.innerHTML = '';
    return;
  }
  if (!ph.number) {
    box.innerHTML = `<p class="panel-note">${escapeHtml(nameOf(S.me))} has no phone in this sandbox.</p>`;
    return;
  }
  const live = ph.calls.filter((c) => LIVE_CALL.has(c.status));
  const past = ph.calls
    .filter((c) => !LIVE_CALL.has(c.status))
    .slice(-5)
    .reverse();
  const sms = ph.sms
    .map(
      (m) => `<li class="sms sms-${m.direction}" data-testid="phone-sms">
        <div class="sms-text">${escapeHtml(m.text)}</div>
        <div class="sms-meta">${m.direction === 'received' ? 'from' : 'to'} ${escapeHtml(showNumber(m.peer))} · ${timeOfIso(m.at)}</div>
      </li>`,
    )
    .join('');
  const focused = document.activeElement?.id === 'sms-text';
  box.innerHTML = `
    <p class="panel-note">${escapeHtml(nameOf(S.me))}'s phone, <b data-testid="phone-number">${escapeHtml(showNumber(ph.number))}</b>. Switchboard texts and calls it through the communications service; what you send from here reaches Switchboard as that service's signed webhooks.</p>
    ${live.length ? `<ul class="phone-calls live-calls">${live.map(callHtml).join('')}</ul>` : ''}
    <h3>Messages <span class="count">${ph.sms.length}</span></h3>
    <ul class="sms-list" data-testid="phone-inbox">${sms || '<li class="empty-row">No messages yet.</li>'}</ul>
    <form class="sms-reply" id="sms-reply" autocomplete="off">
      <input name="text" id="sms-text" aria-label="Reply by SMS" placeholder="Text Switchboard (4 acknowledges a page)" value="${escapeHtml(S.phoneDraft)}">
      <button type="submit" class="bk-button bk-primary small">Send</button>
    </form>
    ${past.length ? `<h3>Recent calls</h3><ul class="phone-calls">${past.map(callHtml).join('')}</ul>` : ''}`;
  const list = box.querySelector('.sms-list');
  if (list) list.scrollTop = list.scrollHeight;
  if (focused) $('sms-text')?.focus();
};

const onPhone = (view) => {
  const before = S.phone;
  S.phone = view;
  const ringing = view.calls.find(
    (c) => c.status === 'ringing' && !before?.calls.some((b) => b.id === c.id && b.status === 'ringing'),
  );
  const last = view.sms.at(-1);
  const texted = before && view.sms.length > before.sms.length && last?.direction === 'received';
  if (S.panel !== 'phone') {
    if (ringing)
      toast(`📞 Your phone is ringing: ${showNumber(ringing.from)}. Open the Phone tab to answer.`);
    else if (texted) toast(`💬 New text on your phone: ${last.text}`);
  }
  renderPhone();
};

$('panel-phone').addEventListener('input', (ev) => {
  if (ev.target instanceof HTMLInputElement && ev.target.id === 'sms-text') S.phoneDraft = ev.target.value;
});
$('panel-phone').addEventListener('submit', async (ev) => {
  if (!(ev.target instanceof HTMLFormElement) || ev.target.id !== 'sms-reply') return;
  ev.preventDefault();
  const input = $('sms-text');
  input.disabled = true;
  try {
    await api('/api/phone/sms', { user: S.me, text: input.value });
    S.phoneDraft = '';
    await loadPhone();
  } catch (e) {
    toast(`The text was not sent: ${e.message}`, 'error');
    input.disabled = false;
  }
});
$('panel-phone').addEventListener('click', async (ev) => {
  const t = ev.target instanceof Element ? ev.target : null;
  const b = t?.closest('[data-call-act], [data-key]');
  if (!b) return;
  const callId = b.closest('[data-call]')?.dataset.call;
  const body = b.dataset.key
    ? { user: S.me, callId, action: 'press', digits: b.dataset.key }
    : { user: S.me, callId, action: b.dataset.callAct };
  b.disabled = true;
  try {
    await api('/api/phone/call', body);
  } catch (e) {
    toast(`The phone refused: ${e.message}`, 'error');
  } finally {
    b.disabled = false;
  }
});

for (const tab of document.querySelectorAll('.panel-tab')) {
  tab.addEventListener('click', () => showPanel(tab.dataset.panel));
}
const showPanel = async (name) => {
  S.panel = name;
  for (const tab of document.querySelectorAll('.panel-tab')) {
    tab.classList.toggle('active', tab.dataset.panel === name);
    tab.setAttribute('aria-selected', String(tab.dataset.panel === name));
  }
  for (const p of ['pagerduty', 'hr', 'store', 'calls', 'phone']) $(`panel-${p}`).hidden = p !== name;
  if (name === 'phone') await loadPhone();
  if (name === 'hr') await loadHr();
  if (name === 'pagerduty') await loadPagerDuty();
  if (name === 'store') {
    if (S.store.mode === 'streams') S.store.streams = await api('/api/store/streams');
    renderStore();
  }
  if (name === 'calls') {
    S.calls = await api('/api/slack/calls');
    renderCalls();
  }
};

// ------------------------------------------------------------------ the sandbox clock

const ADVANCE_LABEL = { 60: '1 hour', 1440: '1 day', 10080: '1 week' };

/** The sandbox's time as the topbar shows it: `Mon 23 Nov 2026, 09:00 UTC` (its zone named). */
const renderClock = () => {
  const now = new Date(Date.now() + S.clock.skewMs);
  $('clock-now').dateTime = now.toISOString();
  $('clock-now').textContent = `${now.toLocaleString('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
  })} UTC`;
  for (const b of document.querySelectorAll('[data-advance]')) b.hidden = !S.clock.movable;
};
const setClock = (c) => {
  S.clock = { skewMs: Date.parse(c.now) - Date.now(), movable: c.movable };
  renderClock();
};
setInterval(renderClock, 15_000);
$('clock').addEventListener('click', async (ev) => {
  const b = ev.target instanceof Element ? ev.target.closest('[data-advance]') : null;
  if (!b) return;
  const minutes = Number(b.dataset.advance);
  const ok = await confirmDialog({
    title: { text: `Move time ${ADVANCE_LABEL[minutes] ?? `${minutes} min`} forward?` },
    text: {
      text: 'Everything in the sandbox (Switchboard, the incident service, the phones, HR) jumps ahead together: timers due by then fire. Time never goes back.',
    },
    confirm: { text: `+${ADVANCE_LABEL[minutes] ?? `${minutes} min`}` },
  });
  if (!ok) return;
  b.disabled = true;
  try {
    setClock(await api('/api/clock/advance', { minutes }));
    toast(`The sandbox clock moved ${ADVANCE_LABEL[minutes] ?? `${minutes} min`} forward.`);
  } catch (e) {
    toast(`The clock did not move: ${e.message}`, 'error');
  } finally {
    b.disabled = false;
  }
});

// ------------------------------------------------------------------ live updates

const connect = () => {
  S.source?.close();
  const source = new EventSource(`/api/events?user=${encodeURIComponent(S.me)}`);
  S.source = source;
  const on = (name, fn) =>
    source.addEventListener(name, (ev) => {
      if (S.source === source) fn(JSON.parse(ev.data));
    });
  on('hello', async () => {
    $('live').textContent = '● live';
    $('live').className = 'live on';
    await refresh();
  });
  on('message', (e) => upsertMessage(e.change, e.message));
  on('ephemeral', addEphemeral);
  on('ephemeral-updated', updateEphemeral);
  on('modal', showModal);
  on('home', (view) => {
    S.data.home = view;
    if (S.view.kind === 'app' && S.view.tab === 'home') renderHome();
  });
  on('channels', (channels) => {
    S.data.channels = channels;
    renderSidebar();
  });
  on('pagerduty', () => {
    if (S.panel === 'pagerduty') void loadPagerDuty();
  });
  on('clock', (c) => {
    setClock(c);
    // HR's "today" and "this week" follow the clock (the incident service's panel hears of it too).
    if (S.panel === 'hr') void loadHr();
  });
  on('hr', () => {
    if (S.panel === 'hr') void loadHr();
  });
  on('store', onStoreEvent);
  on('phone', onPhone);
  on('call', (c) => {
    S.calls.push(c);
    if (S.calls.length > 200) S.calls.shift();
    if (S.panel === 'calls') renderCalls();
  });
  source.onerror = () => {
    $('live').textContent = '● reconnecting…';
    $('live').className = 'live off';
  };
};

const refresh = async () => {
  S.data = await api(`/api/state?user=${encodeURIComponent(S.me)}`);
  if (S.view.kind === 'channel' && !S.data.channels.some((c) => c.id === S.view.id)) {
    const saved = localStorage.getItem('sandbox.channel');
    const first =
      S.data.channels.find((c) => c.id === saved) ?? S.data.channels.find((c) => c.name === 'incidents');
    S.view = { kind: 'channel', id: first?.id ?? S.data.channels[0]?.id ?? '' };
  }
  renderSidebar();
  renderHeader();
  renderMessages();
  showModal(S.data.modal);
  if (S.panel === 'pagerduty') await loadPagerDuty();
  if (S.panel === 'hr') await loadHr();
  await loadPhone();
};

const pickUser = async (id) => {
  S.me = id;
  S.actAs = '';
  S.hrActAs = '';
  S.hrDraft = {};
  S.phone = null;
  S.phoneDraft = '';
  localStorage.setItem('sandbox.user', id);
  $('whoami').value = id;
  connect();
};

$('whoami').addEventListener('change', (ev) => pickUser(ev.target.value));

const start = async () => {
  const people = await api('/api/people');
  $('whoami').innerHTML = people
    .map(
      (p) =>
        `<option value="${escapeHtml(p.id)}">${escapeHtml(p.realName)} · ${escapeHtml(p.title)}</option>`,
    )
    .join('');
  const saved = localStorage.getItem('sandbox.user');
  S.store.tail = await api('/api/store/recent').catch(() => []);
  setClock(await api('/api/clock'));
  await showPanel('pagerduty').catch(() => undefined);
  await pickUser(people.some((p) => p.id === saved) ? saved : people[0].id);
};

void start();
