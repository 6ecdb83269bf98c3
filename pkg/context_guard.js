/* @ts-self-types="./context_guard.d.ts" */

/**
 * `guard::pin::Log`, for one session.
 */
export class CacheLog {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        CacheLogFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_cachelog_free(ptr, 0);
    }
    constructor() {
        const ret = wasm.cachelog_new();
        this.__wbg_ptr = ret;
        CacheLogFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * The usage of the response to the last planned request (tokens).
     * @param {string} model
     * @param {number} cache_read
     * @param {number} cache_write
     */
    observe(model, cache_read, cache_write) {
        const val2 = +cache_read;
        const val3 = +cache_write;
        const ptr0 = passStringToWasm0(model, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        wasm.cachelog_observe(this.__wbg_ptr, ptr0, len0, val2, val3);
    }
    /**
     * The `Plan` (JSON text) for one Messages request body (JSON text) to
     * `model` (`provider/id`) at `now_ms`; throws when the body is not JSON.
     * @param {string} body
     * @param {string} model
     * @param {number} now_ms
     * @returns {string}
     */
    plan(body, model, now_ms) {
        let deferred5_0;
        let deferred5_1;
        try {
            const val3 = +now_ms;
            let ptr0, len0, ptr1, len1;
            try {
                ptr0 = passStringToWasm0(body, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len0 = WASM_VECTOR_LEN;
                ptr1 = passStringToWasm0(model, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len1 = WASM_VECTOR_LEN;
            } catch (e) {
                if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
                if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
                throw e;
            }
            const ret = wasm.cachelog_plan(this.__wbg_ptr, ptr0, len0, ptr1, len1, val3);
            var ptr4 = ret[0];
            var len4 = ret[1];
            if (ret[3]) {
                ptr4 = 0; len4 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred5_0 = ptr4;
            deferred5_1 = len4;
            return getStringFromWasm0(ptr4, len4);
        } finally {
            wasm.__wbindgen_free(deferred5_0, deferred5_1, 1);
        }
    }
    /**
     * The read points (tool_use ids) for the break-even rules, as JSON text.
     * @param {string} model
     * @param {number} now_ms
     * @returns {string}
     */
    readPoints(model, now_ms) {
        let deferred3_0;
        let deferred3_1;
        try {
            const val2 = +now_ms;
            const ptr0 = passStringToWasm0(model, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            const len0 = WASM_VECTOR_LEN;
            const ret = wasm.cachelog_readPoints(this.__wbg_ptr, ptr0, len0, val2);
            deferred3_0 = ret[0];
            deferred3_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
        }
    }
}
if (Symbol.dispose) CacheLog.prototype[Symbol.dispose] = CacheLog.prototype.free;

/**
 * A run-end pass between its two steps. The plan stays here, inside the
 * wasm module, while the extension asks the classifier: only its requests
 * cross, and `finishPass` reads the rest where it is (see `pass::Planned`).
 * `finishPass` consumes it; otherwise call `free()`. A mid-run checkpoint
 * is the same kind of pass, with what its gates measured beside it.
 */
export class Pass {
    static __wrap(ptr) {
        const obj = Object.create(Pass.prototype);
        obj.__wbg_ptr = ptr;
        PassFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        PassFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_pass_free(ptr, 0);
    }
    /**
     * A checkpoint's `Gate` (JSON text): what its gates measured.
     * @returns {string | undefined}
     */
    get gate() {
        const ret = wasm.pass_gate(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * How many tool outputs the pass asks about, then the entries it
     * would edit, one a line (`PassState::held`).
     * @returns {string}
     */
    get held() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.pass_held(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * Why there is nothing to ask, if so: `off`, `no-run`, `no-large-outputs`,
     * `below-min-run-chars`, `no-classifier`; for a checkpoint also
     * `mid-run-off`, `nothing-eligible`, `below-batch`, `not-paying-off`;
     * `judge-not-worth-it` for both.
     * @returns {string | undefined}
     */
    get skipped() {
        const ret = wasm.pass_skipped(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * The JSON text of `ClassifierContext[]`, one request each, in order, in
     * the compact form `guard/wasm.ts` writes out (`wire::requests_compact`:
     * chunk questions as their wording, parts sent already as `head` and
     * `questionsOf`); chunks of an out-of-line text come as `[text, start,
     * end]` (see `pass::plan_json`). Moved out: a second call gives `""`.
     * @returns {string}
     */
    takeRequests() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.pass_takeRequests(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
}
if (Symbol.dispose) Pass.prototype[Symbol.dispose] = Pass.prototype.free;

/**
 * A session's large outputs with the secrets found in them when they
 * arrived (`scanned::Scanned`): a pass or checkpoint planned with it finds
 * only what it does not hold. One per session; `free()` when it ends.
 */
export class Scans {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        ScansFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_scans_free(ptr, 0);
    }
    constructor() {
        const ret = wasm.scans_new();
        this.__wbg_ptr = ret;
        ScansFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * Scans the large tool outputs among the entries of a `PassInput` (in
     * `planPass`'s form; its `settings` say which are large and the user's
     * patterns) that are not scanned yet. How many were scanned.
     * @param {Uint8Array | number[]} input
     * @param {Uint8Array | number[]} texts
     * @param {Uint32Array | number[]} lengths
     * @returns {number}
     */
    note(input, texts, lengths) {
        let ptr0, len0, ptr1, len1, ptr2, len2;
        try {
            ptr0 = passArray8ToWasm0(input, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArray8ToWasm0(texts, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passArray32ToWasm0(lengths, wasm.__wbindgen_malloc);
            len2 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.scans_note(this.__wbg_ptr, ptr0, len0, ptr1, len1, ptr2, len2);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return ret[0] >>> 0;
    }
}
if (Symbol.dispose) Scans.prototype[Symbol.dispose] = Scans.prototype.free;

/**
 * The audit's candidates (`guard::audit`): the same input forms as
 * `planPass` (a whole branch), the JSON of every run end's candidates out.
 * @param {Uint8Array | number[]} input
 * @param {Uint8Array | number[]} texts
 * @param {Uint32Array | number[]} lengths
 * @returns {string}
 */
export function auditCandidates(input, texts, lengths) {
    let deferred5_0;
    let deferred5_1;
    try {
        let ptr0, len0, ptr1, len1, ptr2, len2;
        try {
            ptr0 = passArray8ToWasm0(input, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArray8ToWasm0(texts, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passArray32ToWasm0(lengths, wasm.__wbindgen_malloc);
            len2 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.auditCandidates(ptr0, len0, ptr1, len1, ptr2, len2);
        var ptr4 = ret[0];
        var len4 = ret[1];
        if (ret[3]) {
            ptr4 = 0; len4 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred5_0 = ptr4;
        deferred5_1 = len4;
        return getStringFromWasm0(ptr4, len4);
    } finally {
        wasm.__wbindgen_free(deferred5_0, deferred5_1, 1);
    }
}

/**
 * Distill before compacting: the JSON text of a `guard::compaction::CompactionInput`
 * in, its `Decision` out (whether Pi is about to compact, whether the
 * checkpoint's edits keep it under the threshold, the line `/guard` shows).
 * @param {string} input
 * @returns {string}
 */
export function beforeCompaction(input) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(input, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.beforeCompaction(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * Builds the whole report (rows, drift, history, largest, gauges, text) from
 * one read of Pi (see `report::build_json`):
 *
 * - `inputs`: `ContextInputs` as JSON text, without the per-message columns;
 * - `tokens`, `kind`: Pi's count and the kind of each message, from a
 *   `Float64Array` and a `Uint32Array` (wasm-bindgen copies the memory);
 * - `series`, `marks`: each request's context tokens and marks over the
 *   branch, from a `Float64Array` and a `Uint32Array`;
 * - `describe(index)`: the JSON text of message `index`'s `MessageText`,
 *   called only for the messages the report lists. A throw, a non-string or
 *   bad JSON gives that message no descriptor, not a failed report.
 *
 * Returns `ContextReport` as JSON text.
 * @param {string} inputs
 * @param {Float64Array | number[]} tokens
 * @param {Uint32Array | number[]} kind
 * @param {Float64Array | number[]} series
 * @param {Uint32Array | number[]} marks
 * @param {(index: number) => string} describe
 * @returns {string}
 */
export function buildReport(inputs, tokens, kind, series, marks, describe) {
    let deferred7_0;
    let deferred7_1;
    try {
        let ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3, ptr4, len4;
        try {
            ptr0 = passStringToWasm0(inputs, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArrayF64ToWasm0(tokens, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passArray32ToWasm0(kind, wasm.__wbindgen_malloc);
            len2 = WASM_VECTOR_LEN;
            ptr3 = passArrayF64ToWasm0(series, wasm.__wbindgen_malloc);
            len3 = WASM_VECTOR_LEN;
            ptr4 = passArray32ToWasm0(marks, wasm.__wbindgen_malloc);
            len4 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr4) { wasm.__wbindgen_free(ptr4, len4 * 4, 4); }
            if (ptr3) { wasm.__wbindgen_free(ptr3, len3 * 8, 8); }
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 8, 8); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.buildReport(ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3, ptr4, len4, describe);
        var ptr6 = ret[0];
        var len6 = ret[1];
        if (ret[3]) {
            ptr6 = 0; len6 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred7_0 = ptr6;
        deferred7_1 = len6;
        return getStringFromWasm0(ptr6, len6);
    } finally {
        wasm.__wbindgen_free(deferred7_0, deferred7_1, 1);
    }
}

/**
 * How many secrets `text` holds (`guard::secrets::Secrets::find`): the
 * step as a pass runs it, for the benchmark, without writing the text back.
 * @param {string} text
 * @returns {number}
 */
export function countSecrets(text) {
    const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.countSecrets(ptr0, len0);
    return ret >>> 0;
}

/**
 * Step two: the JSON text of `Outcome` from a planned pass (consumed) and
 * the UTF-8 JSON of the runner's `PassAnswers`.
 * @param {Pass} pass
 * @param {Uint8Array | number[]} answers
 * @returns {string}
 */
export function finishPass(pass, answers) {
    let deferred3_0;
    let deferred3_1;
    try {
        _assertClass(pass, Pass);
        const ptr0 = passArray8ToWasm0(answers, wasm.__wbindgen_malloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.finishPass(pass.__wbg_ptr, ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * `maxSegmentChars` clipped to what a classifier with `contextWindow` tokens
 * takes, and the warning naming the key when it was (`undefined`: unknown window).
 * @param {string} settings
 * @param {number | null} [context_window]
 * @returns {string}
 */
export function fitSegment(settings, context_window) {
    let deferred3_0;
    let deferred3_1;
    try {
        const val2 = +(isLikeNone(context_window) ? 0 : context_window);
        const ptr0 = passStringToWasm0(settings, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.fitSegment(ptr0, len0, !isLikeNone(context_window), val2);
        deferred3_0 = ret[0];
        deferred3_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * The guard's net effect on the main model's bill so far: the JSON text of a
 * `guard::bill::BillInput` (the branch's events, the catalog's prices) in, the
 * `Bill` as JSON out.
 * @param {string} input
 * @returns {string}
 */
export function guardBill(input) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(input, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.guardBill(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * `{ stats, status }`: the savings, lifetime total and usage on the branch,
 * and the status-bar text, from the columns of `stats::columns`:
 *
 * - `shape`: the edited messages' roles, forms, blocks and text lengths, from a `Uint32Array`;
 * - `heads`: the heads of their texts (and tool calls' names and arguments),
 *   joined, as UTF-16 code units in little-endian bytes (Node's
 *   `buffer.write(heads, "utf16le")`, one native copy);
 * - `marks`: the branch's records and compactions, six numbers each, from a `Float64Array`;
 * - `money`: the bill's two words for the status bar (`saved $0.27`), or empty;
 * - `image_head(index, chars)`: a prefix of an image's base64 data, asked
 *   only for images in edited entries and only as far as its dimensions
 *   need. A throw or a non-string reads as no data (an unreadable image).
 *
 * wasm-bindgen copies the three arrays into the module's memory in one step each.
 * @param {Uint32Array | number[]} shape
 * @param {Uint8Array | number[]} heads
 * @param {Float64Array | number[]} marks
 * @param {string} money
 * @param {(index: number, chars: number) => string} image_head
 * @returns {string}
 */
export function guardSavings(shape, heads, marks, money, image_head) {
    let deferred5_0;
    let deferred5_1;
    try {
        let ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3;
        try {
            ptr0 = passArray32ToWasm0(shape, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArray8ToWasm0(heads, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passArrayF64ToWasm0(marks, wasm.__wbindgen_malloc);
            len2 = WASM_VECTOR_LEN;
            ptr3 = passStringToWasm0(money, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len3 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr3) { wasm.__wbindgen_free(ptr3, len3 * 1, 1); }
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 8, 8); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 4, 4); }
            throw e;
        }
        const ret = wasm.guardSavings(ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3, image_head);
        deferred5_0 = ret[0];
        deferred5_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred5_0, deferred5_1, 1);
    }
}

/**
 * The `/guard` report, from the JSON text of a `SummaryInput`.
 * @param {string} input
 * @returns {string}
 */
export function guardSummary(input) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(input, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.guardSummary(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * A chat model as the judge: the user message for one request, from the
 * JSON text of its `state` and of its questions as `[id, type,
 * instructions, [[key, text], …]]` lists (`guard::judge::prompt`). Its reply
 * goes back to `finishPass` as a `replied` outcome.
 * @param {string} state
 * @param {string} questions
 * @returns {string}
 */
export function judgePrompt(state, questions) {
    let deferred4_0;
    let deferred4_1;
    try {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(state, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(questions, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.judgePrompt(ptr0, len0, ptr1, len1);
        var ptr3 = ret[0];
        var len3 = ret[1];
        if (ret[3]) {
            ptr3 = 0; len3 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred4_0 = ptr3;
        deferred4_1 = len3;
        return getStringFromWasm0(ptr3, len3);
    } finally {
        wasm.__wbindgen_free(deferred4_0, deferred4_1, 1);
    }
}

/**
 * A chat model as the judge: its system prompt.
 * @returns {string}
 */
export function judgeSystemPrompt() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.judgeSystemPrompt();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * Before step two, when the judge answered after the boundary the pass was
 * planned at (docs/GUARD.md, "Nobody waits for the judge"): checks and re-weighs the plan against the
 * context now, the `PassInput` in `planPass`'s form, `ms` after planning at
 * the entry `anchor` (`pass::land`). The ids of the items dropped, one a line.
 * @param {Pass} pass
 * @param {Uint8Array | number[]} input
 * @param {Uint8Array | number[]} texts
 * @param {Uint32Array | number[]} lengths
 * @param {string} anchor
 * @param {number} ms
 * @param {boolean} in_request
 * @returns {string}
 */
export function landPass(pass, input, texts, lengths, anchor, ms, in_request) {
    let deferred8_0;
    let deferred8_1;
    try {
        _assertClass(pass, Pass);
        const val5 = +ms;
        const val6 = +in_request;
        let ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3;
        try {
            ptr0 = passArray8ToWasm0(input, wasm.__wbindgen_malloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passArray8ToWasm0(texts, wasm.__wbindgen_malloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passArray32ToWasm0(lengths, wasm.__wbindgen_malloc);
            len2 = WASM_VECTOR_LEN;
            ptr3 = passStringToWasm0(anchor, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len3 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr3) { wasm.__wbindgen_free(ptr3, len3 * 1, 1); }
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.landPass(pass.__wbg_ptr, ptr0, len0, ptr1, len1, ptr2, len2, ptr3, len3, val5, val6);
        var ptr7 = ret[0];
        var len7 = ret[1];
        if (ret[3]) {
            ptr7 = 0; len7 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred8_0 = ptr7;
        deferred8_1 = len7;
        return getStringFromWasm0(ptr7, len7);
    } finally {
        wasm.__wbindgen_free(deferred8_0, deferred8_1, 1);
    }
}

/**
 * The one money answer for a net effect in dollars (`guard::bill::answer`):
 * `saved $0.27 on <whose> so far (est.)`. A net that is not finite reads as 0.
 * @param {number} net_usd
 * @param {string} whose
 * @returns {string}
 */
export function moneyAnswer(net_usd, whose) {
    let deferred3_0;
    let deferred3_1;
    try {
        const val2 = +net_usd;
        const ptr0 = passStringToWasm0(whose, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.moneyAnswer(val2, ptr0, len0);
        deferred3_0 = ret[0];
        deferred3_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * `Parsed` (`{ settings, warnings }`) from the settings file's text (`""` for no file).
 * @param {string} json
 * @returns {string}
 */
export function parseSettings(json) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ptr0 = passStringToWasm0(json, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.parseSettings(ptr0, len0);
        deferred2_0 = ret[0];
        deferred2_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}

/**
 * Step one of a mid-run checkpoint: as `planPass`, with the JSON of
 * `CheckpointInput` (`PassInput` and `gates`); finished by `finishPass`.
 * @param {Scans} scans
 * @param {Uint8Array | number[]} input
 * @param {Uint8Array | number[]} texts
 * @param {Uint32Array | number[]} lengths
 * @returns {Pass}
 */
export function planCheckpoint(scans, input, texts, lengths) {
    _assertClass(scans, Scans);
    let ptr0, len0, ptr1, len1, ptr2, len2;
    try {
        ptr0 = passArray8ToWasm0(input, wasm.__wbindgen_malloc);
        len0 = WASM_VECTOR_LEN;
        ptr1 = passArray8ToWasm0(texts, wasm.__wbindgen_malloc);
        len1 = WASM_VECTOR_LEN;
        ptr2 = passArray32ToWasm0(lengths, wasm.__wbindgen_malloc);
        len2 = WASM_VECTOR_LEN;
    } catch (e) {
        if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
        if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
        if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
        throw e;
    }
    const ret = wasm.planCheckpoint(scans.__wbg_ptr, ptr0, len0, ptr1, len1, ptr2, len2);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return Pass.__wrap(ret[0]);
}

/**
 * Step one of a run-end pass: the UTF-8 JSON of `PassInput` whose long text
 * blocks are out of line (`{"type":"text","textAt":k}`), the out-of-line
 * texts as UTF-8 one after another, and their byte lengths; `scans`, the
 * secrets of outputs found when they arrived.
 * @param {Scans} scans
 * @param {Uint8Array | number[]} input
 * @param {Uint8Array | number[]} texts
 * @param {Uint32Array | number[]} lengths
 * @returns {Pass}
 */
export function planPass(scans, input, texts, lengths) {
    _assertClass(scans, Scans);
    let ptr0, len0, ptr1, len1, ptr2, len2;
    try {
        ptr0 = passArray8ToWasm0(input, wasm.__wbindgen_malloc);
        len0 = WASM_VECTOR_LEN;
        ptr1 = passArray8ToWasm0(texts, wasm.__wbindgen_malloc);
        len1 = WASM_VECTOR_LEN;
        ptr2 = passArray32ToWasm0(lengths, wasm.__wbindgen_malloc);
        len2 = WASM_VECTOR_LEN;
    } catch (e) {
        if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 4, 4); }
        if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
        if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
        throw e;
    }
    const ret = wasm.planPass(scans.__wbg_ptr, ptr0, len0, ptr1, len1, ptr2, len2);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return Pass.__wrap(ret[0]);
}

/**
 * `RecallReply` for a `RecallRequest`.
 * @param {string} request
 * @returns {string}
 */
export function recall(request) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(request, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.recall(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * `RecallToolInfo`: the `recall` tool's description and parameter texts.
 * @returns {string}
 */
export function recallToolInfo() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.recallToolInfo();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * The provider requests of each run of a branch (`run::run_lengths`), from
 * one letter per message (`u`, `a`, `t`, `r`, `c`, other): the one
 * definition of a run, for the `median` estimator of later requests.
 * @param {Uint8Array | number[]} kinds
 * @returns {Uint32Array}
 */
export function runLengths(kinds) {
    const ptr0 = passArray8ToWasm0(kinds, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.runLengths(ptr0, len0);
    var v2 = getArrayU32FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
    return v2;
}

/**
 * For each message (one letter each, as `runLengths` takes them), 1 where it
 * starts a run (`run::starts_run`), else 0: the audit's later requests count
 * runs by the same definition.
 * @param {Uint8Array | number[]} kinds
 * @returns {Uint8Array}
 */
export function runStarts(kinds) {
    const ptr0 = passArray8ToWasm0(kinds, wasm.__wbindgen_malloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.runStarts(ptr0, len0);
    var v2 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
    return v2;
}

/**
 * One line safe to paint on a terminal, at most `max` JavaScript characters
 * (for text the screen shows that did not come through the report, such as
 * an error message from Pi).
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
export function sanitizeLine(text, max) {
    let deferred3_0;
    let deferred3_1;
    try {
        const val2 = +max;
        const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.sanitizeLine(ptr0, len0, val2);
        deferred3_0 = ret[0];
        deferred3_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * The settings file's text with `enabled` set; throws when the text is not a
 * JSON object (the file is then left as it is).
 * @param {string} json
 * @param {boolean} enabled
 * @returns {string}
 */
export function setEnabled(json, enabled) {
    let deferred4_0;
    let deferred4_1;
    try {
        const val2 = +enabled;
        const ptr0 = passStringToWasm0(json, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.setEnabled(ptr0, len0, val2);
        var ptr3 = ret[0];
        var len3 = ret[1];
        if (ret[3]) {
            ptr3 = 0; len3 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred4_0 = ptr3;
        deferred4_1 = len3;
        return getStringFromWasm0(ptr3, len3);
    } finally {
        wasm.__wbindgen_free(deferred4_0, deferred4_1, 1);
    }
}

/**
 * The settings file's text with `model` set (`/guard model <provider/id>`); throws when `model` is not
 * `provider/id` or the text is not a JSON object (the file is then left as it is).
 * @param {string} json
 * @param {string} model
 * @returns {string}
 */
export function setModel(json, model) {
    let deferred4_0;
    let deferred4_1;
    try {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(json, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(model, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.setModel(ptr0, len0, ptr1, len1);
        var ptr3 = ret[0];
        var len3 = ret[1];
        if (ret[3]) {
            ptr3 = 0; len3 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred4_0 = ptr3;
        deferred4_1 = len3;
        return getStringFromWasm0(ptr3, len3);
    } finally {
        wasm.__wbindgen_free(deferred4_0, deferred4_1, 1);
    }
}

/**
 * A count as notes and the status bar show it: `950`, `1.2k`, `36.1k`, `1.3M`.
 * @param {number} n
 * @returns {string}
 */
export function shortCount(n) {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.shortCount(n);
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * How notes and records name a call, such as ``bash `rg -n status` ``, from
 * the tool name and the JSON text of its arguments.
 * @param {string} tool
 * @param {string} args
 * @returns {string}
 */
export function toolLabel(tool, args) {
    let deferred3_0;
    let deferred3_1;
    try {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(tool, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(args, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.toolLabel(ptr0, len0, ptr1, len1);
        deferred3_0 = ret[0];
        deferred3_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * Prices per token from a session's recorded usage (`economics::bill::usage_prices`,
 * the bill's rule) and the rewrite's premium over a read: `[read, write,
 * premium]`, NaN where not recorded. The totals are dollars and tokens: cache
 * reads, cache writes, uncached input.
 * @param {number} cost_read
 * @param {number} read
 * @param {number} cost_write
 * @param {number} write
 * @param {number} cost_input
 * @param {number} input
 * @returns {Float64Array}
 */
export function usagePrices(cost_read, read, cost_write, write, cost_input, input) {
    const ret = wasm.usagePrices(cost_read, read, cost_write, write, cost_input, input);
    var v1 = getArrayF64FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 8, 8);
    return v1;
}

/**
 * The core's version.
 * @returns {string}
 */
export function version() {
    let deferred1_0;
    let deferred1_1;
    try {
        const ret = wasm.version();
        deferred1_0 = ret[0];
        deferred1_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
    }
}

/**
 * A text with its secrets withheld, as a request to the judge would carry
 * it, and what was found (`guard::secrets::withhold_text_json`): for the
 * corpus tests and the benchmark.
 * @param {string} text
 * @param {string} patterns
 * @returns {string}
 */
export function withholdSecrets(text, patterns) {
    let deferred3_0;
    let deferred3_1;
    try {
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(patterns, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.withholdSecrets(ptr0, len0, ptr1, len1);
        deferred3_0 = ret[0];
        deferred3_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_Error_208446807d0d1e30: function(arg0, arg1) {
            const ret = Error(getStringFromWasm0(arg0, arg1));
            return ret;
        },
        __wbg___wbindgen_string_get_7ce8eee7fd327545: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'string' ? obj : undefined;
            var ptr1 = isLikeNone(ret) ? 0 : passStringToWasm0(ret, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            var len1 = WASM_VECTOR_LEN;
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 1, len1, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, ptr1, true);
        },
        __wbg___wbindgen_throw_4c88d8bf264fd984: function(arg0, arg1) {
            throw new Error(getStringFromWasm0(arg0, arg1));
        },
        __wbg_call_0cbce7c39a0977c2: function() { return handleError(function (arg0, arg1, arg2, arg3) {
            const ret = arg0.call(arg1, arg2 >>> 0, arg3 >>> 0);
            return ret;
        }, arguments); },
        __wbg_call_9884dff398bb3949: function() { return handleError(function (arg0, arg1, arg2) {
            const ret = arg0.call(arg1, arg2 >>> 0);
            return ret;
        }, arguments); },
        __wbindgen_init_externref_table: function() {
            const table = wasm.__wbindgen_externrefs;
            table.set(0, undefined);
            table.set(1024, undefined);
            table.set(1025, null);
            table.set(1026, true);
            table.set(1027, false);
        },
    };
    return {
        __proto__: null,
        "./context_guard_bg.js": import0,
    };
}

const CacheLogFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_cachelog_free(ptr, 1));
const PassFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_pass_free(ptr, 1));
const ScansFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_scans_free(ptr, 1));

function addToExternrefTable0(obj) {
    const idx = wasm.__externref_table_alloc();
    wasm.__wbindgen_externrefs.set(idx, obj);
    return idx;
}

function _assertClass(instance, klass) {
    if (!(instance instanceof klass)) {
        throw new Error(`expected instance of ${klass.name}`);
    }
}

function getArrayF64FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getFloat64ArrayMemory0().subarray(ptr / 8, ptr / 8 + len);
}

function getArrayU32FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint32ArrayMemory0().subarray(ptr / 4, ptr / 4 + len);
}

function getArrayU8FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint8ArrayMemory0().subarray(ptr / 1, ptr / 1 + len);
}

let cachedDataViewMemory0 = null;
function getDataViewMemory0() {
    if (cachedDataViewMemory0 === null || cachedDataViewMemory0.buffer.detached === true || (cachedDataViewMemory0.buffer.detached === undefined && cachedDataViewMemory0.buffer !== wasm.memory.buffer)) {
        cachedDataViewMemory0 = new DataView(wasm.memory.buffer);
    }
    return cachedDataViewMemory0;
}

let cachedFloat64ArrayMemory0 = null;
function getFloat64ArrayMemory0() {
    if (cachedFloat64ArrayMemory0 === null || cachedFloat64ArrayMemory0.byteLength === 0) {
        cachedFloat64ArrayMemory0 = new Float64Array(wasm.memory.buffer);
    }
    return cachedFloat64ArrayMemory0;
}

function getStringFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return decodeText(getUint8ArrayMemory0().subarray(ptr, ptr + len));
}

let cachedUint32ArrayMemory0 = null;
function getUint32ArrayMemory0() {
    if (cachedUint32ArrayMemory0 === null || cachedUint32ArrayMemory0.byteLength === 0) {
        cachedUint32ArrayMemory0 = new Uint32Array(wasm.memory.buffer);
    }
    return cachedUint32ArrayMemory0;
}

let cachedUint8ArrayMemory0 = null;
function getUint8ArrayMemory0() {
    if (cachedUint8ArrayMemory0 === null || cachedUint8ArrayMemory0.byteLength === 0) {
        cachedUint8ArrayMemory0 = new Uint8Array(wasm.memory.buffer);
    }
    return cachedUint8ArrayMemory0;
}

function handleError(f, args) {
    try {
        return f.apply(this, args);
    } catch (e) {
        const idx = addToExternrefTable0(e);
        wasm.__wbindgen_exn_store(idx);
    }
}

function isLikeNone(x) {
    return x === undefined || x === null;
}

function passArray32ToWasm0(arg, malloc) {
    const ptr = malloc(arg.length * 4, 4) >>> 0;
    getUint32ArrayMemory0().set(arg, ptr / 4);
    WASM_VECTOR_LEN = arg.length;
    return ptr;
}

function passArray8ToWasm0(arg, malloc) {
    const ptr = malloc(arg.length * 1, 1) >>> 0;
    getUint8ArrayMemory0().set(arg, ptr / 1);
    WASM_VECTOR_LEN = arg.length;
    return ptr;
}

function passArrayF64ToWasm0(arg, malloc) {
    const ptr = malloc(arg.length * 8, 8) >>> 0;
    getFloat64ArrayMemory0().set(arg, ptr / 8);
    WASM_VECTOR_LEN = arg.length;
    return ptr;
}

function passStringToWasm0(arg, malloc, realloc) {
    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

    let len = arg.length;
    let ptr = malloc(len, 1) >>> 0;

    const mem = getUint8ArrayMemory0();

    let offset = 0;

    for (; offset < len; offset++) {
        const code = arg.charCodeAt(offset);
        if (code > 0x7F) break;
        mem[ptr + offset] = code;
    }
    if (offset !== len) {
        if (offset !== 0) {
            arg = arg.slice(offset);
        }
        ptr = realloc(ptr, len, len = offset + arg.length * 3, 1) >>> 0;
        const view = getUint8ArrayMemory0().subarray(ptr + offset, ptr + len);
        const ret = cachedTextEncoder.encodeInto(arg, view);

        offset += ret.written;
        ptr = realloc(ptr, len, offset, 1) >>> 0;
    }

    WASM_VECTOR_LEN = offset;
    return ptr;
}

function takeFromExternrefTable0(idx) {
    const value = wasm.__wbindgen_externrefs.get(idx);
    wasm.__externref_table_dealloc(idx);
    return value;
}

let cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
cachedTextDecoder.decode();
const MAX_SAFARI_DECODE_BYTES = 2146435072;
let numBytesDecoded = 0;
function decodeText(bytes) {
    numBytesDecoded += bytes.length;
    if (numBytesDecoded >= MAX_SAFARI_DECODE_BYTES) {
        cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
        cachedTextDecoder.decode();
        numBytesDecoded = bytes.length;
    }
    return cachedTextDecoder.decode(bytes);
}

const cachedTextEncoder = new TextEncoder();

if (!('encodeInto' in cachedTextEncoder)) {
    cachedTextEncoder.encodeInto = function (arg, view) {
        const buf = cachedTextEncoder.encode(arg);
        view.set(buf);
        return {
            read: arg.length,
            written: buf.length
        };
    };
}

let WASM_VECTOR_LEN = 0;

let wasmModule, wasmInstance, wasm;
function __wbg_finalize_init(instance, module) {
    wasmInstance = instance;
    wasm = instance.exports;
    wasmModule = module;
    cachedDataViewMemory0 = null;
    cachedFloat64ArrayMemory0 = null;
    cachedUint32ArrayMemory0 = null;
    cachedUint8ArrayMemory0 = null;
    wasm.__wbindgen_start();
    return wasm;
}

async function __wbg_load(module, imports) {
    if (typeof Response === 'function' && module instanceof Response) {
        if (!module.ok) {
            throw new Error(`failed to fetch Wasm: ${module.status} ${module.statusText} fetching '${module.url}'`);
        }

        if (typeof WebAssembly.instantiateStreaming === 'function') {
            try {
                return await WebAssembly.instantiateStreaming(module, imports);
            } catch (e) {
                const validResponse = expectedResponseType(module.type);

                if (validResponse && module.headers.get('Content-Type') !== 'application/wasm') {
                    console.warn("`WebAssembly.instantiateStreaming` failed because your server does not serve Wasm with `application/wasm` MIME type. Falling back to `WebAssembly.instantiate` which is slower. Original error:\n", e);

                } else { throw e; }
            }
        }

        const bytes = await module.arrayBuffer();
        return await WebAssembly.instantiate(bytes, imports);
    } else {
        const instance = await WebAssembly.instantiate(module, imports);

        if (instance instanceof WebAssembly.Instance) {
            return { instance, module };
        } else {
            return instance;
        }
    }

    function expectedResponseType(type) {
        switch (type) {
            case 'basic': case 'cors': case 'default': return true;
        }
        return false;
    }
}

function initSync(module) {
    if (wasm !== undefined) return wasm;


    if (module !== undefined) {
        if (Object.getPrototypeOf(module) === Object.prototype) {
            ({module} = module)
        } else {
            console.warn('using deprecated parameters for `initSync()`; pass a single object instead')
        }
    }

    const imports = __wbg_get_imports();
    if (!(module instanceof WebAssembly.Module)) {
        module = new WebAssembly.Module(module);
    }
    const instance = new WebAssembly.Instance(module, imports);
    return __wbg_finalize_init(instance, module);
}

let __wbg_init_promise;
async function __wbg_init(module_or_path) {
    if (wasm !== undefined) return wasm;
    if (__wbg_init_promise === undefined) {
        __wbg_init_promise = __wbg_init_once(module_or_path);
        __wbg_init_promise.catch(() => { __wbg_init_promise = undefined; });
    }
    return __wbg_init_promise;
}

async function __wbg_init_once(module_or_path) {

    if (module_or_path !== undefined) {
        if (Object.getPrototypeOf(module_or_path) === Object.prototype) {
            ({module_or_path} = module_or_path)
        } else {
            console.warn('using deprecated parameters for the initialization function; pass a single object instead')
        }
    }

    if (module_or_path === undefined) {
        module_or_path = new URL('context_guard_bg.wasm', import.meta.url);
    }
    const imports = __wbg_get_imports();

    if (typeof module_or_path === 'string' || (typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)) {
        module_or_path = fetch(module_or_path);
    }

    const { instance, module } = await __wbg_load(await module_or_path, imports);

    return __wbg_finalize_init(instance, module);
}

export { initSync, __wbg_init as default };
