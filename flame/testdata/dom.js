// dom.js runs the flame graph's script against a small stand-in for a
// browser's DOM, for script_test.go (node dom.js < input.json).
//
// Input: {doc: element tree of the SVG, script: the script's text,
// actions: [...]}. An element is {tag, attrs, text, children}. Actions:
//   {do: "click" | "hover", frame: name}   a mouse event on the frame's rect
//   {do: "key", key, ctrl, answer}          a key press; answer is what
//                                           prompt() returns if asked
//   {do: "snapshot"}                        records the frames' state
// Output: {snapshots: [...], alerts: [...], prompts: [...]}.
"use strict";

class Element {
	constructor(j, parent) {
		this.tagName = j.tag;
		this.attrs = Object.assign({}, j.attrs);
		this.parentNode = parent;
		this.ownText = j.text || "";
		this.children = (j.children || []).map((c) => new Element(c, this));
		this.style = {};
		this.listeners = {};
		const classes = new Set();
		this.classList = {
			toggle(c, on) {
				if (on) classes.add(c);
				else classes.delete(c);
			},
			contains: (c) => classes.has(c),
		};
	}
	getAttribute(name) {
		return Object.prototype.hasOwnProperty.call(this.attrs, name) ? this.attrs[name] : null;
	}
	setAttribute(name, value) {
		this.attrs[name] = String(value);
	}
	getElementsByTagName(tag) {
		const out = [];
		const walk = (e) => {
			for (const c of e.children) {
				if (c.tagName === tag) out.push(c);
				walk(c);
			}
		};
		walk(this);
		return out;
	}
	get textContent() {
		return this.ownText + this.children.map((c) => c.textContent).join("");
	}
	set textContent(v) {
		this.ownText = String(v);
		this.children = [];
	}
	addEventListener(type, fn) {
		(this.listeners[type] = this.listeners[type] || []).push(fn);
	}
	// dispatch bubbles an event from this element up to the document.
	dispatch(type, props) {
		let stopped = false;
		const ev = Object.assign({ type, target: this, preventDefault() { stopped = true; } }, props);
		for (let el = this; el; el = el.parentNode) {
			for (const fn of el.listeners[type] || []) fn.call(el, ev);
		}
		return stopped;
	}
}

const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const root = new Element(input.doc, null);
const byId = (id) => {
	const walk = (e) => {
		if (e.getAttribute("id") === id) return e;
		for (const c of e.children) {
			const f = walk(c);
			if (f) return f;
		}
		return null;
	};
	return walk(root);
};
const document = {
	documentElement: root,
	getElementById: byId,
	addEventListener: (type, fn) => root.addEventListener(type, fn),
};
const alerts = [], prompts = [];
let answer = null;
const prompt = (msg, def) => {
	prompts.push({ msg, def });
	return answer;
};
const alert = (msg) => alerts.push(String(msg));

new Function("document", "prompt", "alert", input.script)(document, prompt, alert);

const frames = () => byId("frames").getElementsByTagName("g");
const nameOf = (g) => g.getElementsByTagName("title")[0].textContent.split("\n")[0];
const text = (id) => byId(id).textContent;
const snapshots = [];
for (const a of input.actions) {
	switch (a.do) {
		case "click":
		case "hover": {
			const g = frames().find((g) => nameOf(g) === a.frame);
			if (!g) throw new Error("no frame " + a.frame);
			g.getElementsByTagName("rect")[0].dispatch(a.do === "click" ? "click" : "mouseover", {});
			break;
		}
		case "key":
			answer = a.answer === undefined ? null : a.answer;
			root.dispatch("keydown", { key: a.key, ctrlKey: !!a.ctrl, metaKey: false });
			break;
		case "snapshot":
			snapshots.push({
				frames: frames().map((g) => {
					const r = g.getElementsByTagName("rect")[0], t = g.getElementsByTagName("text")[0];
					return {
						name: nameOf(g),
						x: +r.getAttribute("x"),
						width: +r.getAttribute("width"),
						fill: r.getAttribute("fill"),
						label: t.textContent,
						labelX: +t.getAttribute("x"),
						hidden: g.style.display === "none",
						dim: g.classList.contains("dim"),
					};
				}),
				details: text("details"),
				matched: text("matched"),
				search: text("search"),
				unzoom: byId("unzoom").style.visibility || "",
			});
			break;
		default:
			throw new Error("unknown action " + a.do);
	}
}
process.stdout.write(JSON.stringify({ snapshots, alerts, prompts }));
