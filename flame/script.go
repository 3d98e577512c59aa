package flame

// script makes the graph interactive. It reads what WriteSVG wrote: on
// #frames the samples (data-total), the frames' left edge and width in
// pixels (data-x, data-span) and a label character's width (data-charw);
// on each frame's <g> its first sample (data-s) and samples (data-n), its
// name as the first line of its <title> and the rest as its details. A
// frame's depth is its rect's y: callees are higher up.
//
// Zooming into frame Z draws Z's range of samples across the whole width:
// frames at Z's depth or above whose range lies within Z's (Z and its
// callees) are scaled, frames below whose range holds Z's (its callers)
// span the width, dimmed, and all others are hidden. Search colours the
// frames whose names match and adds up the samples under them, counting
// nested matches (recursion) once: frames come in depth-first order, so a
// match that starts before the end of the last counted one lies inside it.
//
// It must not contain the CDATA terminator.
const script = `
"use strict";
(function () {
	const HIGHLIGHT = "#e62ee6"; // saturated magenta: no family's
	const doc = document;
	const frames = doc.getElementById("frames");
	const total = +frames.getAttribute("data-total");
	const x0 = +frames.getAttribute("data-x");
	const span = +frames.getAttribute("data-span");
	const charW = +frames.getAttribute("data-charw");
	const details = doc.getElementById("details");
	const matched = doc.getElementById("matched");
	const unzoomBtn = doc.getElementById("unzoom");
	const searchBtn = doc.getElementById("search");

	const groups = Array.prototype.slice.call(frames.getElementsByTagName("g"));
	const n = groups.length;
	const start = new Float64Array(n), count = new Float64Array(n), depthY = new Float64Array(n);
	const rects = new Array(n), texts = new Array(n), names = new Array(n), info = new Array(n), fills = new Array(n);
	const index = new Map();
	for (let i = 0; i < n; i++) {
		const g = groups[i];
		index.set(g, i);
		start[i] = +g.getAttribute("data-s");
		count[i] = +g.getAttribute("data-n");
		rects[i] = g.getElementsByTagName("rect")[0];
		texts[i] = g.getElementsByTagName("text")[0];
		depthY[i] = +rects[i].getAttribute("y");
		fills[i] = rects[i].getAttribute("fill");
		const t = g.getElementsByTagName("title")[0].textContent;
		const nl = t.indexOf("\n");
		names[i] = nl < 0 ? t : t.slice(0, nl);
		info[i] = nl < 0 ? "" : t.slice(nl + 1);
	}

	// fit cuts a name to a frame's width as the writer does.
	function fit(name, w) {
		const chars = Math.floor((w - 6) / charW);
		if (chars < 3) return "";
		const cs = Array.from(name);
		return cs.length <= chars ? name : cs.slice(0, chars - 2).join("") + "..";
	}

	let zoomed = -1;
	function zoom(z) {
		zoomed = z;
		const zs = z < 0 ? 0 : start[z], zn = z < 0 ? total : count[z];
		const zy = z < 0 ? Infinity : depthY[z];
		const k = span / zn;
		for (let i = 0; i < n; i++) {
			const s = start[i], c = count[i], g = groups[i];
			let x, w, dim = false;
			if (depthY[i] <= zy && s >= zs && s + c <= zs + zn) {
				x = x0 + (s - zs) * k;
				w = c * k;
			} else if (depthY[i] > zy && s <= zs && s + c >= zs + zn) {
				x = x0;
				w = span;
				dim = true;
			} else {
				g.style.display = "none";
				continue;
			}
			g.style.display = "";
			g.classList.toggle("dim", dim);
			rects[i].setAttribute("x", x.toFixed(2));
			rects[i].setAttribute("width", w.toFixed(2));
			texts[i].setAttribute("x", (x + 3).toFixed(2));
			texts[i].textContent = fit(names[i], w);
		}
		unzoomBtn.style.visibility = z < 0 ? "hidden" : "visible";
	}

	let query = "";
	function search(q) {
		let re = null;
		if (q !== "") {
			try {
				re = new RegExp(q);
			} catch (e) {
				alert("Not a regular expression: " + e.message);
				return;
			}
		}
		query = q;
		let sum = 0, end = -1;
		for (let i = 0; i < n; i++) {
			const hit = re !== null && i > 0 && re.test(names[i]);
			rects[i].setAttribute("fill", hit ? HIGHLIGHT : fills[i]);
			if (hit && start[i] >= end) {
				sum += count[i];
				end = start[i] + count[i];
			}
		}
		searchBtn.textContent = re === null ? "Search" : "Search: /" + (q.length > 32 ? q.slice(0, 30) + ".." : q) + "/";
		matched.textContent = re === null ? "" :
			"Matched: " + (total > 0 ? (100 * sum / total).toFixed(2) : "0.00") + "% (" + sum + " of " + total + " samples)";
	}
	function ask() {
		const q = prompt("Highlight frames whose names match a regular expression (empty clears):", query);
		if (q !== null) search(q);
	}

	function frameOf(e) {
		for (let el = e.target; el && el !== frames; el = el.parentNode) {
			const i = index.get(el);
			if (i !== undefined) return i;
		}
		return -1;
	}
	frames.addEventListener("click", function (e) {
		const i = frameOf(e);
		if (i === 0) zoom(-1);
		else if (i > 0 && i !== zoomed) zoom(i);
	});
	frames.addEventListener("mouseover", function (e) {
		const i = frameOf(e);
		if (i >= 0) details.textContent = names[i] + " (" + info[i] + ")";
	});
	frames.addEventListener("mouseout", function () { details.textContent = ""; });
	unzoomBtn.addEventListener("click", function () { zoom(-1); });
	searchBtn.addEventListener("click", ask);
	doc.addEventListener("keydown", function (e) {
		if ((e.key === "f" && (e.ctrlKey || e.metaKey)) || (e.key === "/" && !e.ctrlKey && !e.metaKey)) {
			e.preventDefault();
			ask();
		} else if (e.key === "Escape") {
			zoom(-1);
			search("");
		}
	});
})();
`
