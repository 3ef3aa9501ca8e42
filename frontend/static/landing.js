// posekit landing page: pick a robot, start a session, list the live ones.
// Talks only to the REST API; no build step.
"use strict";

const state = { robots: [], selected: null, pending: null };
const $ = (id) => document.getElementById(id);

// "1 keyframe", "2 keyframes", "0 keyframes".
function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function showError(message) {
  const box = $("error-box");
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body) {
  const options = { method, credentials: "same-origin", headers: {} };
  if (body instanceof FormData) {
    options.body = body;  // multipart: the browser sets the content type
  } else if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  if (response.status === 401) {
    throw new Error("access token required: open this page with ?token=…");
  }
  if (!response.ok) {
    let detail = `${response.status} ${response.statusText}`;
    let code = null;
    try {
      const payload = await response.json();
      detail = typeof payload.detail === "string" ? payload.detail : JSON.stringify(payload.detail);
      code = payload.code || null;
    } catch (_) { /* not JSON */ }
    const error = new Error(detail);
    error.status = response.status;
    error.code = code;
    throw error;
  }
  return response.status === 204 ? null : response.json();
}

const OWN = "your robots";
// How the robot list says where a robot comes from ("here": nothing to say).
const AVAILABILITY = { download: " · downloaded on first use", unavailable: " · not available here" };

function groupOf(robot) {
  if (robot.source === "builtin") return "built-in";
  if (robot.source === "local" || robot.source === "uploaded") return OWN;
  return robot.category;
}

function renderRobots() {
  const filter = $("robot-filter").value.trim().toLowerCase();
  const list = $("robot-list");
  list.replaceChildren();
  const groups = new Map();
  for (const robot of state.robots) {
    const text = `${robot.name} ${robot.title} ${robot.category}`.toLowerCase();
    if (filter && !text.includes(filter)) continue;
    const key = groupOf(robot);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(robot);
  }
  const first = ["built-in", OWN];
  const rank = (key) => (first.includes(key) ? first.indexOf(key) : first.length);
  const keys = [...groups.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const key of keys) {
    const header = document.createElement("div");
    header.className = "category";
    header.textContent = key;
    list.appendChild(header);
    for (const robot of groups.get(key)) {
      const item = document.createElement("button");
      item.type = "button";
      item.className = "robot-item";
      item.dataset.robot = robot.name;
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(state.selected === robot.name));
      item.textContent = robot.title;
      const small = document.createElement("small");
      small.textContent = robot.name + (AVAILABILITY[robot.available] || "");
      item.appendChild(small);
      if (robot.available === "unavailable") {
        item.classList.add("unavailable");
        item.setAttribute("aria-disabled", "true");
        item.title = "Not on this server: not in its Menagerie checkout or download cache.";
      } else {
        item.addEventListener("click", () => selectRobot(robot.name));
      }
      list.appendChild(item);
    }
  }
}

async function selectRobot(name) {
  state.selected = name;
  renderRobots();
  $("new-session").disabled = false;
  const select = $("keyframe-select");
  select.replaceChildren(new Option("(default)", ""));
  $("robot-detail").textContent = "loading…";
  try {
    const detail = await api("GET", `/api/robots/${encodeURIComponent(name)}`);
    for (const key of detail.keyframes) select.appendChild(new Option(key, key));
    if (detail.default_keyframe) select.value = detail.default_keyframe;
    $("robot-detail").textContent =
      `${detail.nv} DoF${detail.floating_base ? ", floating base" : ""}, ` +
      `${plural(detail.frames.site.length, "site")}, ${plural(detail.keyframes.length, "keyframe")}`;
    const notes = $("robot-notes");
    notes.replaceChildren(...(detail.notes || []).map((note) => {
      const item = document.createElement("li");
      item.textContent = note;
      return item;
    }));
    notes.hidden = !(detail.notes || []).length;
    showError("");
  } catch (error) {
    $("robot-detail").textContent = "";
    showError(`Could not load ${name}: ${error.message}`);
  }
}

async function newSession() {
  if (!state.selected) return;
  const button = $("new-session");
  button.disabled = true;
  button.textContent = "Starting…";
  try {
    const body = { robot: state.selected, preset: $("preset-checkbox").checked };
    if ($("keyframe-select").value) body.keyframe = $("keyframe-select").value;
    const session = await api("POST", "/api/sessions", body);
    window.location.href = `/viewer/${encodeURIComponent(session.id)}`;
  } catch (error) {
    showError(`Could not start a session: ${error.message}`);
    button.disabled = false;
    button.textContent = "New session";
  }
}

async function refreshSessions() {
  try {
    const sessions = await api("GET", "/api/sessions");
    const body = $("session-list");
    body.replaceChildren();
    for (const session of sessions) {
      const row = document.createElement("tr");
      row.className = "session-row";
      row.dataset.session = session.id;
      const status = session.owner ? `${session.status} on ${session.owner}` : session.status;
      const cells = [session.id, session.robot, status, String(session.watchers)];
      cells.forEach((text, index) => {
        const cell = document.createElement("td");
        cell.textContent = text;
        if (index === 3) cell.className = "watchers";
        row.appendChild(cell);
      });
      const actions = document.createElement("td");
      actions.className = "actions";
      const open = document.createElement("a");
      open.href = `/viewer/${encodeURIComponent(session.id)}`;
      open.textContent = "open";
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "delete";
      remove.textContent = "delete";
      remove.addEventListener("click", async () => {
        if (!window.confirm(`Delete session ${session.id}?`)) return;
        try {
          await api("DELETE", `/api/sessions/${encodeURIComponent(session.id)}`);
          refreshSessions();
        } catch (error) { showError(`Could not delete: ${error.message}`); }
      });
      actions.append(open, remove);
      row.appendChild(actions);
      body.appendChild(row);
    }
    $("no-sessions").hidden = sessions.length > 0;
  } catch (error) {
    showError(error.message);
  }
}

async function loadSpec(file) {
  try {
    const spec = JSON.parse(await file.text());
    const session = await api("POST", "/api/sessions", { spec });
    window.location.href = `/viewer/${encodeURIComponent(session.id)}`;
  } catch (error) {
    showError(`Could not load the spec: ${error.message}`);
  }
}

// An upload whose name is taken keeps its file: the page asks for another name.
async function uploadRobot(file) {
  const status = $("upload-status");
  const again = $("upload-again");
  const name = $("robot-name").value.trim();
  status.textContent = `Uploading ${file.name}…`;
  const form = new FormData();
  form.append("file", file, file.name);
  if (name) form.append("name", name);
  try {
    const robot = await api("POST", "/api/robots", form);
    const frames = Object.keys(robot.preset_reasons || {}).join(", ");
    status.textContent = `${robot.name} is ready: ${robot.nv} DoF; default tasks: ${frames}.`;
    again.hidden = true;
    $("robot-name").value = "";
    state.pending = null;
    showError("");
    state.robots = await api("GET", "/api/robots");
    await selectRobot(robot.name);
  } catch (error) {
    status.textContent = "";
    if (error.status === 409 && error.code === "conflict") {
      state.pending = file;
      again.hidden = false;
      $("robot-name").focus();
      showError(`${error.message} — type another name above and upload again.`);
      return;
    }
    showError(`Could not upload ${file.name}: ${error.message}`);
  }
}

function acceptDrops() {
  const zone = $("robot-drop");
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const files = event.dataTransfer && event.dataTransfer.files;
    if (files && files.length) uploadRobot(files[0]);
  });
  $("upload-again").addEventListener("click", () => {
    if (state.pending) uploadRobot(state.pending);
  });
  $("robot-name").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && state.pending) uploadRobot(state.pending);
  });
  $("robot-file").addEventListener("change", (event) => {
    if (event.target.files.length) uploadRobot(event.target.files[0]);
    event.target.value = "";
  });
}

async function start() {
  $("robot-filter").addEventListener("input", renderRobots);
  $("new-session").addEventListener("click", newSession);
  acceptDrops();
  $("spec-file").addEventListener("change", (event) => {
    if (event.target.files.length) loadSpec(event.target.files[0]);
  });
  try {
    state.robots = await api("GET", "/api/robots");
    renderRobots();
    const first = state.robots.find((robot) => robot.source === "builtin");
    if (first) selectRobot(first.name);
  } catch (error) {
    showError(error.message);
  }
  refreshSessions();
  setInterval(refreshSessions, 2000);
}

start();
