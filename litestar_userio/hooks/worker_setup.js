// The setup of a hook worker's V8 context (see v8_worker.py), run once before any hook. It removes what a hook must not
// have, installs the console and fetch, freezes every object a hook can reach (so tampering throws in strict mode and
// cannot reach the next run) and returns the functions the worker calls. Nothing it returns is reachable from hooks.
(function (consoleLimit, prefixLength, answerLimit) {
  "use strict";
  const G = globalThis;
  const { freeze, isFrozen, getPrototypeOf, getOwnPropertyDescriptor, defineProperty, hasOwn } = Object;
  const { ownKeys, apply, deleteProperty } = Reflect;
  const stringify = JSON.stringify, parse = JSON.parse, toText = String;
  const promiseResolve = Promise.resolve.bind(Promise), promiseThen = Promise.prototype.then;
  const regExpExec = RegExp.prototype.exec, arrayPush = Array.prototype.push;
  const charCodeAt = String.prototype.charCodeAt, stringSlice = String.prototype.slice;
  const ErrorClass = Error, TypeErrorClass = TypeError;
  const hookFrame = /\n\s*at (?:[^\n]*\()?hook\.ts:(\d+):(\d+)/;  // the first stack frame in the hook's code

  // -- what a hook must not have: timers and other ways to run code after its run is over, legacy
  //    RegExp statics (they hold the last match of any run), V8's own console.
  const remove = (object, name) => { if (!deleteProperty(object, name)) object[name] = undefined; };
  for (const name of ["WebAssembly", "FinalizationRegistry", "console", "setTimeout", "clearTimeout",
                      "__timer_manager"]) remove(G, name);
  remove(Atomics, "wait"); remove(Atomics, "waitAsync");
  for (const name of ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "input", "$_", "lastMatch", "$&",
                      "lastParen", "$+", "leftContext", "$`", "rightContext", "$'"]) remove(RegExp, name);

  // -- console: the run in progress collects what its hook prints, up to consoleLimit bytes of text.
  let current = null;
  function utf8Length(text) {
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = apply(charCodeAt, text, [i]);
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
    }
    return n;
  }
  function cut(text, bytes) {
    let n = 0, i = 0;
    for (; i < text.length; i++) {
      const c = apply(charCodeAt, text, [i]);
      const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
      if (n + size > bytes) break;
      n += size;
    }
    return apply(stringSlice, text, [0, i]);
  }
  function render(value) {
    if (typeof value === "string") return value;
    try {
      if (value instanceof ErrorClass) {
        const stack = value.stack;
        return typeof stack === "string" ? stack : toText(value);
      }
      const json = stringify(value);
      return typeof json === "string" ? json : toText(value);
    } catch {
      try { return toText(value); } catch { return "[value that cannot be shown]"; }
    }
  }
  function emit(level, args) {
    const run = current;
    if (run === null || run.truncated) return;
    let message = "";
    for (let i = 0; i < args.length; i++) message += (i ? " " : "") + render(args[i]);
    // + 1: each line counts its line break. A message longer in UTF-16 units than the room left is longer in bytes
    // too: no need to measure all of it.
    const size = message.length >= consoleLimit - run.bytes ? Infinity : utf8Length(message) + 1;
    if (run.bytes + size > consoleLimit) {
      const room = consoleLimit - run.bytes - 1;
      if (room > 0) apply(arrayPush, run.entries, [{ level, message: cut(message, room) }]);
      const marker = `[console output truncated at ${consoleLimit} bytes]`;
      apply(arrayPush, run.entries, [{ level: "warn", message: marker }]);
      run.truncated = true;
      return;
    }
    run.bytes += size;
    apply(arrayPush, run.entries, [{ level, message }]);
  }
  const console = {
    log(...args) { emit("log", args); },
    info(...args) { emit("info", args); },
    warn(...args) { emit("warn", args); },
    error(...args) { emit("error", args); },
    debug(...args) { emit("log", args); },
    trace(...args) { emit("log", args); },
    dir(value) { emit("log", [value]); },
    assert(condition, ...args) { if (!condition) emit("error", ["Assertion failed", ...args]); },
  };
  defineProperty(G, "console", { value: console, writable: false, enumerable: false, configurable: false });

  // -- fetch: performed by the server, never from inside V8. A call queues its request on the run in progress;
  //    `takeFetches` hands the queued requests to the worker, which asks the parent process, and `deliverFetches`
  //    settles them with the parent's answers (a Response, or a TypeError naming why the request was refused).
  const MapClass = Map, PromiseClass = Promise, objectKeys = Object.keys, isArray = Array.isArray;
  const arrayJoin = Array.prototype.join, arraySort = Array.prototype.sort;
  const toLower = String.prototype.toLowerCase, toUpper = String.prototype.toUpperCase;
  const trim = String.prototype.trim, regExpTest = RegExp.prototype.test;
  const tokenPattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, absoluteHttp = /^https?:\/\//i;
  function token(value, what) {
    const text = toText(value);
    if (!apply(regExpTest, tokenPattern, [text])) throw new TypeErrorClass(`fetch: invalid ${what}: ${text}`);
    return text;
  }
  class Headers {
    #map = new MapClass();
    constructor(init) {
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        for (const [name, value] of init) this.append(name, value);
      } else if (isArray(init)) {
        for (const pair of init) {
          if (!isArray(pair) || pair.length !== 2) throw new TypeErrorClass("Headers: each pair must be [name, value]");
          this.append(pair[0], pair[1]);
        }
      } else if (typeof init === "object") {
        for (const name of objectKeys(init)) this.append(name, init[name]);
      } else {
        throw new TypeErrorClass("Headers: init must be an object, an array of pairs or Headers");
      }
    }
    append(name, value) {
      const key = apply(toLower, token(name, "header name"), []);
      const list = this.#map.get(key);
      const text = apply(trim, toText(value), []);
      if (list === undefined) this.#map.set(key, [text]);
      else apply(arrayPush, list, [text]);
    }
    set(name, value) { this.#map.set(apply(toLower, token(name, "header name"), []), [apply(trim, toText(value), [])]); }
    get(name) {
      const list = this.#map.get(apply(toLower, toText(name), []));
      return list === undefined ? null : apply(arrayJoin, list, [", "]);
    }
    has(name) { return this.#map.has(apply(toLower, toText(name), [])); }
    delete(name) { this.#map.delete(apply(toLower, toText(name), [])); }
    forEach(callback, thisArg) { for (const [name, value] of this) apply(callback, thisArg, [value, name, this]); }
    *entries() {
      const names = apply(arraySort, [...this.#map.keys()], []);
      for (const name of names) yield [name, this.get(name)];
    }
    *keys() { for (const [name] of this) yield name; }
    *values() { for (const [, value] of this) yield value; }
    [Symbol.iterator]() { return this.entries(); }
  }
  function bodyText(body) {
    if (body === undefined || body === null) return null;
    if (typeof body !== "string") throw new TypeErrorClass("fetch: a body must be a string (JSON.stringify it)");
    return body;
  }
  class Request {
    #url; #method = "GET"; #headers; #body = null;
    constructor(input, init) {
      if (input instanceof Request) {
        this.#url = input.#url; this.#method = input.#method; this.#headers = new Headers(input.#headers);
        this.#body = input.#body;
      } else {
        this.#url = toText(input);
        this.#headers = new Headers();
      }
      if (init !== undefined && init !== null) {
        if (typeof init !== "object") throw new TypeErrorClass("fetch: init must be an object");
        if (init.method !== undefined) this.#method = apply(toUpper, token(init.method, "method"), []);
        if (init.headers !== undefined) this.#headers = new Headers(init.headers);
        if (init.body !== undefined) this.#body = bodyText(init.body);
      }
      if (this.#body !== null && (this.#method === "GET" || this.#method === "HEAD")) {
        throw new TypeErrorClass(`fetch: a ${this.#method} request cannot have a body`);
      }
    }
    get url() { return this.#url; }
    get method() { return this.#method; }
    get headers() { return this.#headers; }
    text() { return promiseResolve(this.#body === null ? "" : this.#body); }
    json() { return apply(promiseThen, this.text(), [parse]); }
    static wire(request, index) {
      return { i: index, url: request.#url, method: request.#method, headers: [...request.#headers],
               body: request.#body };
    }
  }
  const wire = Request.wire;
  delete Request.wire;
  let received;
  class Response {
    #body; #status = 200; #statusText = ""; #headers; #url = ""; #redirected = false; #used = false;
    constructor(body, init) {
      this.#body = bodyText(body) ?? "";
      this.#headers = new Headers(init === undefined || init === null ? undefined : init.headers);
      if (init !== undefined && init !== null) {
        if (init.status !== undefined) {
          const status = +init.status;
          if (!(status >= 200 && status <= 599 && status === (status | 0))) {
            throw new RangeError(`Response: status ${init.status} is not in 200-599`);
          }
          this.#status = status;
        }
        if (init.statusText !== undefined) this.#statusText = toText(init.statusText);
      }
    }
    get status() { return this.#status; }
    get statusText() { return this.#statusText; }
    get ok() { return this.#status >= 200 && this.#status <= 299; }
    get headers() { return this.#headers; }
    get url() { return this.#url; }
    get redirected() { return this.#redirected; }
    get bodyUsed() { return this.#used; }
    get type() { return "basic"; }
    text() {
      if (this.#used) return PromiseClass.reject(new TypeErrorClass("Response: the body was already read"));
      this.#used = true;
      return promiseResolve(this.#body);
    }
    json() { return apply(promiseThen, this.text(), [parse]); }
    clone() {
      if (this.#used) throw new TypeErrorClass("Response: the body was already read");
      return received(this.#body, this.#status, this.#statusText, [...this.#headers], this.#url, this.#redirected);
    }
    static received(body, status, statusText, headers, url, redirected) {
      const response = new Response(body, { headers });
      response.#status = status; response.#statusText = statusText; response.#url = url;
      response.#redirected = redirected;
      return response;
    }
  }
  received = Response.received;
  delete Response.received;
  function fetch(input, init) {
    const run = current;
    return new PromiseClass((resolve, reject) => {
      const request = new Request(input, init);
      if (run === null) throw new TypeErrorClass("fetch: the hook's run is over");
      if (!apply(regExpTest, absoluteHttp, [request.url])) {
        throw new TypeErrorClass(`fetch: ${request.url} is not an absolute http(s) URL`);
      }
      const wired = wire(request, run.fetchCount);
      if (wired.body !== null && wired.body.length > answerLimit) {
        throw new TypeErrorClass(`fetch refused: the request body is too large (over ${answerLimit} characters)`);
      }
      run.fetchCount++;
      apply(arrayPush, run.fetches, [{ resolve, reject, request: wired }]);
    });
  }
  for (const [name, value] of [["Headers", Headers], ["Request", Request], ["Response", Response], ["fetch", fetch]]) {
    defineProperty(G, name, { value, writable: false, enumerable: false, configurable: false });
  }
  // At most `answerLimit` characters of request bodies per batch (the parent takes frames of a few MB at most); the
  // rest wait for the next batch.
  function takeFetches() {
    const run = current;
    if (run === null || run.fetches.length === 0) return "";
    const requests = [], waiting = [];
    let size = 0;
    for (const pending of run.fetches) {
      const length = pending.request.body === null ? 0 : pending.request.body.length;
      if (requests.length && size + length > answerLimit) {
        apply(arrayPush, waiting, [pending]);
        continue;
      }
      size += length;
      run.inflight.set(pending.request.i, pending);
      apply(arrayPush, requests, [pending.request]);
    }
    run.fetches = waiting;
    return stringify(requests);
  }
  function deliverFetches() {
    const run = current;
    if (run === null) return;
    for (const answer of parse(this)) {
      const pending = run.inflight.get(answer.i);
      if (pending === undefined) continue;
      run.inflight.delete(answer.i);
      if (answer.ok) {
        pending.resolve(received(answer.body, answer.status, answer.statusText, answer.headers, answer.url,
                                 answer.redirected));
      } else {
        pending.reject(new TypeErrorClass(answer.error));
      }
    }
  }

  // -- the override mistake: assigning `toString`, `name` or `message` on an instance must keep working once
  //    the prototype that holds them is frozen. These become accessors whose setter defines an own property.
  function allowOverride(object, name) {
    const desc = getOwnPropertyDescriptor(object, name);
    if (!desc || !hasOwn(desc, "value") || !desc.writable || !desc.configurable) return;
    const value = desc.value;
    defineProperty(object, name, {
      get() { return value; },
      set(replacement) {
        if (this === object) throw new TypeErrorClass(`Cannot assign to read only property '${toText(name)}'`);
        defineProperty(this, name, { value: replacement, writable: true, enumerable: true, configurable: true });
      },
      enumerable: desc.enumerable,
      configurable: false,
    });
  }
  for (const name of ownKeys(Object.prototype)) allowOverride(Object.prototype, name);
  for (const name of ["toString", "push", "concat"]) allowOverride(Array.prototype, name);
  for (const name of ["toString", "bind", "apply", "call", "constructor"]) allowOverride(Function.prototype, name);
  for (const E of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError,
                   SuppressedError]) {
    for (const name of ["name", "message", "toString", "constructor"]) allowOverride(E.prototype, name);
  }
  allowOverride(Promise.prototype, "constructor");

  // -- freeze everything reachable from the global object and from the intrinsics only syntax reaches.
  const anonymous = () => {
    const segments = new Intl.Segmenter().segment("a");
    return [
      G,
      getPrototypeOf(function* () {}), getPrototypeOf(async function () {}), getPrototypeOf(async function* () {}),
      getPrototypeOf([][Symbol.iterator]()), getPrototypeOf(new Map()[Symbol.iterator]()),
      getPrototypeOf(new Set()[Symbol.iterator]()), getPrototypeOf(""[Symbol.iterator]()),
      getPrototypeOf(/a/[Symbol.matchAll]("a")), getPrototypeOf([].values().map((x) => x)),
      getPrototypeOf(Iterator.from({ next() { return { done: true }; } })),
      getPrototypeOf(segments), getPrototypeOf(segments[Symbol.iterator]()),
      getOwnPropertyDescriptor((function () { return arguments; })(), "callee").get,
    ];
  };
  const seen = new Set();
  const stack = anonymous();
  while (stack.length) {
    const object = stack.pop();
    if ((typeof object !== "object" && typeof object !== "function") || object === null || seen.has(object)) continue;
    seen.add(object);
    stack.push(getPrototypeOf(object));
    for (const key of ownKeys(object)) {
      const desc = getOwnPropertyDescriptor(object, key);
      if (desc === undefined) continue;
      stack.push(desc.value, desc.get, desc.set);
    }
  }
  for (const object of seen) freeze(object);

  // A tripwire, checked after every run, for what freezing cannot cover: the intrinsics only syntax reaches
  // (recorded above) and script-scope bindings, which live outside any object (mini-racer's setTimeout shim declares
  // one, `__TimerManager`, unless the worker kept it out). A failed check retires the worker.
  const watched = [...anonymous(), Object.prototype, Array.prototype, Function.prototype, Promise.prototype, JSON];
  const timerBinding = () => (typeof __TimerManager === "undefined" ? undefined : __TimerManager);
  const timerClass = timerBinding();
  function intact() {
    for (let i = 0; i < watched.length; i++) if (!isFrozen(watched[i])) return false;
    return timerBinding() === timerClass;
  }
  function unfrozen() {
    const found = new Set(), queue = anonymous();
    let count = 0;
    while (queue.length) {
      const object = queue.pop();
      if ((typeof object !== "object" && typeof object !== "function") || object === null) continue;
      if (found.has(object)) continue;
      found.add(object);
      if (!isFrozen(object)) count++;
      queue.push(getPrototypeOf(object));
      for (const key of ownKeys(object)) {
        const desc = getOwnPropertyDescriptor(object, key);
        if (desc !== undefined) queue.push(desc.value, desc.get, desc.set);
      }
    }
    return `${count}/${found.size}`;
  }

  // -- runs. A run's reply is a JSON text; `box[0]` holds it once an async hook has settled.
  const box = [""];

  function describe(error) {
    let text;
    try {
      if (error instanceof ErrorClass) text = toText(error);
      else if (typeof error === "string") text = error;
      else {
        text = stringify(error);
        if (typeof text !== "string") text = toText(error);
      }
    } catch {
      text = "(an exception that cannot be shown)";
    }
    if (text.length > 4096) text = apply(stringSlice, text, [0, 4096]) + "…";
    try {
      const trace = error !== null && typeof error === "object" ? error.stack : undefined;
      const match = typeof trace === "string" ? apply(regExpExec, hookFrame, [trace]) : null;
      if (match !== null) {
        const line = +match[1], column = +match[2] - (match[1] === "1" ? prefixLength : 0);
        text += ` (hook.ts:${line}:${column})`;
      }
    } catch {}
    return text;
  }
  function finish(run, reply) {
    if (current !== run) return;
    current = null;
    box[0] = reply + `,"c":${stringify(run.entries)}${intact() ? "" : ',"retire":true'}}`;
  }
  function failed(run, kind, error) {
    finish(run, `{"ok":false,"k":"${kind}","m":${stringify(kind === "exception" ? describe(error) : error)}`);
  }
  function settled(run, value) {
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      return failed(run, "invalid_json", `the hook's answer is not JSON: ${describe(error)}`);
    }
    if (typeof json !== "string") {
      return failed(run, "invalid_json", `the hook's answer is not JSON: it returned ${typeof value}`);
    }
    if (json.length > answerLimit) {
      const size = `${json.length} characters of JSON, at most ${answerLimit}`;
      return failed(run, "invalid_json", `the hook's answer is too large: ${size}`);
    }
    finish(run, `{"ok":true,"r":${json}`);
  }

  // One runner per hook. `factory()` evaluates the hook's module scope afresh: nothing a run keeps in a
  // top-level `let` or `const` survives into the next one. The reply is in box[0] once the promise jobs have run.
  function makeRunner(factory) {
    return function () {
      // `[event, context]` as one JSON text, passed as the receiver: see v8_caller in v8_worker.py
      const run = { entries: [], bytes: 0, truncated: false, fetches: [], inflight: new MapClass(), fetchCount: 0 };
      current = run;
      box[0] = "";
      try {
        const input = parse(this);
        const context = freeze({ secrets: freeze(input[1].secrets ?? {}) });
        const hook = factory();
        if (typeof hook !== "function") throw new TypeErrorClass("the hook's default export is not a function");
        const value = hook(input[0], context);
        if (value !== null && (typeof value === "object" || typeof value === "function") &&
            typeof value.then === "function") {
          apply(promiseThen, promiseResolve(value), [(v) => settled(run, v), (e) => failed(run, "exception", e)]);
        } else {
          settled(run, value);
        }
      } catch (error) {
        failed(run, "exception", error);
      }
    };
  }
  return [makeRunner, box, unfrozen, takeFetches, deliverFetches];
})
