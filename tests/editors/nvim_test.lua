-- Neovim test: `nvim --headless -u NONE` runs this file (see CMakeLists.txt).
-- It loads editors/nvim through require('quickfill').setup{...}, opens a
-- Python file so that the FileType autocommand attaches the real quickfill
-- binary through Neovim's own LSP client (vim.lsp.start or start_client +
-- buf_attach_client on 0.7), types into the buffer (didChange goes out from
-- Neovim's change tracking), and asks for completions through quickfill's
-- completefunc and its ghost-text path, asserting on the server's items.
--
-- Environment: QUICKFILL_BIN (required), QUICKFILL_MODEL (a GGUF file; without
-- it the model-dependent part is skipped and the script exits 77 after the
-- protocol checks). Exit status: 0 pass, 1 fail, 77 skipped.
local WAIT = tonumber(os.getenv('QUICKFILL_TEST_WAIT_MS') or '') or 300000  -- safety net only

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local t = dofile(here .. '/nvim_test_util.lua').new('nvim_test')
local out, check = t.out, t.check
local log_file = nil  -- the server's --log-file

-- The module's conversion of LSP items into complete-items, on a scratch buffer.
local function unit_checks(qf)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { 'x = 1', '    fo', 'é = foo' })
  local function te(l1, c1, l2, c2, text)
    return { label = text, textEdit = { newText = text, range = {
      start = { line = l1, character = c1 }, ['end'] = { line = l2, character = c2 } } } }
  end
  -- Cursor after "    fo" (row 1, byte 6); one item replaces "fo", one inserts at the cursor.
  local start, items = qf.to_complete_items(b, { isIncomplete = false, items = {
    te(1, 4, 1, 6, 'for x in y:'), te(1, 6, 1, 6, 'o()\n    pass'), { label = 'lbl' }, te(0, 0, 0, 0, 'other line'),
  } }, 1, 6)
  check(start == 4, 'complete-items start at the earliest edit start')
  check(#items == 3, 'items on other lines are dropped')
  check(items[1].word == 'for x in y:', 'replacing edit keeps its text')
  check(items[2].word == 'foo()' and items[2].user_data.quickfill.rest == '    pass',
        'inserting edit gets the replaced prefix; further lines go to user_data')
  check(items[3].word == 'folbl', 'items without textEdit insert at the cursor')
  -- UTF-16 columns: "é" is 1 UTF-16 unit but 2 bytes.
  local s2, it2 = qf.to_complete_items(b, { te(2, 4, 2, 7, 'foo.bar') }, 2, 8)
  check(s2 == 5 and it2[1].word == 'foo.bar', 'UTF-16 character offsets become byte columns')
  check(#select(2, qf.to_complete_items(b, vim.NIL, 0, 0)) == 0, 'null answer, no items')
  check(#select(2, qf.to_complete_items(b, { items = {} }, 0, 0)) == 0, 'empty list, no items')
  vim.api.nvim_buf_delete(b, { force = true })
end

local function run()
  unit_checks(require('quickfill'))
  local bin = os.getenv('QUICKFILL_BIN') or ''
  local model = os.getenv('QUICKFILL_MODEL') or ''
  if bin == '' or vim.fn.executable(bin) ~= 1 then
    out('SKIP: QUICKFILL_BIN is not set to an executable quickfill binary')
    return 77
  end
  local have_model = model ~= '' and vim.loop.fs_stat(model) ~= nil
  out('nvim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.' ..
      tostring(vim.version().patch) .. ', vim.lsp.start: ' .. tostring(vim.lsp.start ~= nil))

  vim.cmd('filetype on')
  local qf = require('quickfill')
  log_file = (os.getenv('QUICKFILL_TEST_WORK') or vim.fn.tempname()) .. '/quickfill-server.log'
  vim.fn.mkdir(vim.fn.fnamemodify(log_file, ':h'), 'p')
  os.remove(log_file)
  qf.setup({
    binary = bin,
    -- Without a model file, point at a missing one so that the server surely has none.
    model = have_model and model or (vim.fn.tempname() .. '-no-such-model.gguf'),
    log_level = 'debug',
    log_file = log_file,
    filetypes = { 'python' },
    exclude = { 'local_secret.py' },  -- added to the built-in list (.env, keys, ...)
    -- Budgets far beyond what a tiny model needs (not a timing assert).
    settings = { completion = { autoDeadlineMs = 60000, explicitDeadlineMs = 60000 } },
    ghost_text = { debounce_ms = 10 },
    timeout_ms = WAIT,
  })

  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local path = dir .. '/sample.py'
  vim.fn.writefile({
    'import os', '', '',
    'def read_lines(path):',
    '    with open(path) as f:',
    '        return f.read().splitlines()',
    '', '',
    'def main():',
    '    ',
  }, path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'python', 'buffer has filetype python')

  local client
  local ok = vim.wait(WAIT, function()
    client = qf.get_client(bufnr)
    return (client ~= nil and client.initialized == true) or qf.last_exit ~= nil
  end, 20)
  check(qf.last_exit == nil, 'server still running (exit: ' .. vim.inspect(qf.last_exit) .. ')')
  check(ok, 'quickfill client attached and initialized (log: ' .. log_file .. ', ' .. vim.lsp.get_log_path() .. ')')
  local caps = client.server_capabilities
  local sync = caps.textDocumentSync
  local change = type(sync) == 'table' and sync.change or sync
  check(change == 2, 'server offers incremental sync')
  check(type(caps.completionProvider) == 'table', 'server offers completionProvider')
  check(caps.inlineCompletionProvider ~= nil, 'server offers inlineCompletionProvider')
  check(vim.bo[bufnr].completefunc:find('quickfill') ~= nil, "completefunc is quickfill's")

  local stats, err = qf.stats(bufnr)
  check(type(stats) == 'table', 'quickfill/stats answers (' .. tostring(err) .. ')')
  -- The dashboard page from quickfill/report, written to a file and handed to the opener.
  local opened
  qf.config.open_dashboard = function(p) opened = p end
  local page_path = vim.fn.tempname() .. '.html'
  local written, dash_err = qf.write_dashboard(page_path, bufnr)
  check(written == page_path, 'the dashboard page is written (' .. tostring(dash_err) .. ')')
  local page = table.concat(vim.fn.readfile(page_path, 'b'), '\n')
  check(page:sub(1, 15) == '<!DOCTYPE html>' and page:find('<svg id="plot-slo-burn"', 1, true) ~= nil,
        'the dashboard page has its plots')
  vim.cmd('QuickfillDashboard')
  check(opened ~= nil and vim.fn.filereadable(opened) == 1, ':QuickfillDashboard writes the page and opens it')
  os.remove(page_path)
  os.remove(opened)

  -- :QuickfillDoctor: the real `quickfill doctor` for the binary and model the server runs with.
  vim.cmd('QuickfillDoctor')
  local doctor_buf = vim.api.nvim_get_current_buf()
  local report = table.concat(vim.api.nvim_buf_get_lines(doctor_buf, 0, -1, false), '\n')
  check(vim.api.nvim_buf_get_name(doctor_buf):find('quickfill://doctor', 1, true) ~= nil and
        report:find('quickfill doctor', 1, true) ~= nil and report:find('kernel level', 1, true) ~= nil and
        report:find('problem(s)', 1, true) ~= nil, ':QuickfillDoctor shows the report: ' .. report:sub(1, 200))
  vim.cmd('bwipeout')

  -- Privacy: a .env (the built-in list) and a file matching the `exclude`
  -- option are never attached, so never sent, even with a filetype quickfill
  -- attaches to; the option also reaches the server's settings.
  local env_path = dir .. '/.env'
  vim.fn.writefile({ 'API_KEY=sk-live-NVIMSECRET' }, env_path)
  vim.cmd('edit ' .. vim.fn.fnameescape(env_path))
  local env_buf = vim.api.nvim_get_current_buf()
  vim.bo[env_buf].filetype = 'python'
  check(qf.private_reason(env_buf) ~= nil and qf.get_client(env_buf) == nil, 'a .env buffer is not attached')
  local secret_path = dir .. '/local_secret.py'
  vim.fn.writefile({ 'TOKEN = "NVIMSECRET2"' }, secret_path)
  vim.cmd('edit ' .. vim.fn.fnameescape(secret_path))
  local secret_buf = vim.api.nvim_get_current_buf()
  check(vim.bo[secret_buf].filetype == 'python' and qf.get_client(secret_buf) == nil,
        'a buffer matching the exclude option is not attached')
  check(vim.deep_equal(qf.server_settings().privacy, { exclude = { 'local_secret.py' } }),
        'the exclude option is sent to the server: ' .. vim.inspect(qf.server_settings().privacy))
  local st = qf.status(bufnr)
  check(type(st) == 'table' and st.openDocuments == 1, 'the server holds only the sample: ' .. vim.inspect(st and st.openDocuments))
  vim.cmd('buffer ' .. bufnr)

  -- Wait for the model load to finish (quickfill/status).
  local status
  check(vim.wait(WAIT, function()
    status = qf.status(bufnr)
    return type(status) == 'table' and status.modelLoading == false
  end, 100), 'model load finished')

  if not have_model then
    check(status.modelLoaded == false, 'no model loaded: ' .. tostring(status.noModelReason))
    -- Without a model the server answers an empty list, never fake items.
    local start, items = qf.request_completion(bufnr, true)
    check(start ~= nil and #items == 0, 'no items without a model')
    local ex, ex_err = qf.explain(bufnr)
    check(ex == nil and tostring(ex_err):find('no model is loaded') ~= nil,
          'quickfill/explainCompletion says that no model is loaded: ' .. tostring(ex_err))
    out('SKIP: no model file (set QUICKFILL_MODEL); completion items were not checked')
    return 77
  end
  check(status.modelLoaded == true, 'model loaded: ' .. vim.inspect(status))

  -- :QuickfillExplain at the end of "    " in main(): a scratch buffer with the parts and the prompt.
  local src_win = vim.api.nvim_get_current_win()
  vim.o.virtualedit = 'onemore'
  vim.api.nvim_win_set_cursor(0, { 10, 4 })
  vim.cmd('QuickfillExplain')
  local ebuf = vim.api.nvim_get_current_buf()
  check(ebuf ~= bufnr, ':QuickfillExplain opens its own buffer')
  check(vim.bo[ebuf].buftype == 'nofile' and vim.bo[ebuf].modifiable == false, 'the explanation buffer is a read-only scratch buffer')
  local elines = vim.api.nvim_buf_get_lines(ebuf, 0, -1, false)
  local etext = table.concat(elines, '\n')
  check(elines[1]:find('^quickfill prompt: %S+ format, %d+ tokens in %d+ parts') ~= nil, 'explanation header: ' .. elines[1])
  check(etext:find('\nconfidence gate, automatic triggers: %-?[%d.]+ %(%a') ~= nil, 'the explanation names the confidence gate and its origin')
  check(etext:find('\nprefix +%d+  ' .. vim.pesc(vim.uri_from_bufnr(bufnr))) ~= nil, 'a prefix part from the buffer')
  check(etext:find('----- prompt -----\n', 1, true) ~= nil and etext:find('def read_lines(path):\n    with open(path) as f:', 1, true) ~= nil,
        'the prompt holds the text above the cursor')
  vim.cmd('bwipeout')
  vim.api.nvim_set_current_win(src_win)
  check(vim.api.nvim_get_current_buf() == bufnr, 'back in the source buffer')
  local ex = qf.explain(bufnr)
  local sum, joined_parts = 0, ''
  for _, p in ipairs(ex.parts) do sum, joined_parts = sum + p.tokens, joined_parts .. p.text end
  check(sum == ex.tokens and joined_parts == ex.prompt, 'the parts add up to the prompt: ' .. sum .. ' of ' .. ex.tokens)
  check(elines[1]:find(' ' .. ex.tokens .. ' tokens', 1, true) ~= nil, 'the buffer showed the same prompt')

  -- Type "print(" on line 10 character by character, as a user would.
  -- The script runs in normal mode: 'virtualedit' lets the cursor sit after the
  -- last character, where it is in insert mode while typing.
  vim.o.virtualedit = 'onemore'
  vim.api.nvim_win_set_cursor(0, { 10, 4 })
  for ch in ('print('):gmatch('.') do
    local cur = vim.api.nvim_win_get_cursor(0)
    vim.api.nvim_buf_set_text(bufnr, cur[1] - 1, cur[2], cur[1] - 1, cur[2], { ch })
    vim.api.nvim_win_set_cursor(0, { cur[1], cur[2] + 1 })
  end
  check(vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1] == '    print(', 'typed into the buffer')

  -- completefunc, exactly as CTRL-X CTRL-U calls it.
  local start = qf.completefunc(1, '')
  check(type(start) == 'number' and start >= 0 and start <= 16, 'completefunc findstart returns a column: ' .. tostring(start))
  local items = qf.completefunc(0, '')
  check(type(items) == 'table' and #items > 0, 'completefunc returns the server items (' .. #items .. ')')
  for i, it in ipairs(items) do
    check(type(it.word) == 'string' and it.word ~= '', 'item ' .. i .. ' has a word: ' .. vim.inspect(it.word))
  end

  -- The raw answer agrees: items carry textEdits on the cursor line.
  local s2, items2, raw = qf.request_completion(bufnr, true)
  check(s2 ~= nil and #items2 > 0, 'request_completion returns items')
  for _, it in ipairs(raw.items or raw) do
    check(it.textEdit ~= nil and it.textEdit.range.start.line == 9, 'item has a textEdit on the cursor line')
  end

  local line_before = vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1]

  -- Ghost text: textDocument/inlineCompletion drawn as an extmark.
  local done, text = false, nil
  qf.ghost_request(bufnr, true, function(t) done, text = true, t end)
  check(vim.wait(WAIT, function() return done end, 20), 'inlineCompletion answered')
  check(type(text) == 'string' and text ~= '', 'ghost text from the server: ' .. vim.inspect(text))
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, vim.api.nvim_create_namespace('quickfill_ghost'), 0, -1, { details = true })
  check(#marks == 1 and marks[1][2] == 9, 'one ghost-text extmark on the cursor line')
  local vt = marks[1][4].virt_text
  local first_line = vim.split(text, '\n', { plain = true })[1]
  -- Neovim shows bytes that are not valid UTF-8 as <xx>, as strtrans() does.
  check(vt and vt[1] and (vt[1][1] == first_line or vt[1][1] == vim.fn.strtrans(first_line)),
        'extmark shows the first line of the item: ' .. vim.inspect(vt) .. ' vs ' .. vim.inspect(first_line))
  -- The cycle key's function shows the answer's other items (explicit requests
  -- have several candidates, duplicates dropped), then the first again.
  local seen, shown = { [text] = true }, text
  for _ = 1, 16 do
    shown = qf.ghost_cycle(bufnr, 1)
    check(type(shown) == 'string' and shown ~= '', 'ghost text cycles: ' .. vim.inspect(shown))
    if shown == text then break end
    check(not seen[shown], 'each item is shown once per round: ' .. vim.inspect(shown))
    seen[shown] = true
  end
  check(shown == text, 'cycling comes back to the first item')
  check(qf.ghost_accept(bufnr), 'accepting ghost text inserts it')
  local joined = table.concat(vim.api.nvim_buf_get_lines(bufnr, 9, -1, false), '\n')
  check(joined:sub(1, #line_before + #text) == line_before .. text, 'buffer holds the accepted text')

  stats = qf.stats(bufnr)
  check(type(stats) == 'table' and stats.answered >= 3 and #stats.recent >= 3,
        'quickfill/stats counts the answered requests')
  -- The completion sources: the one implicit local source, metered, and its summary line.
  local src = (stats.sources or {})[1] or {}
  check(src.name == 'local' and src.kind == 'local' and src.requests >= 3 and src.latencyMs.count >= 3,
        'quickfill/stats meters the local source: ' .. vim.inspect(stats.sources))
  local summary = qf.sources_summary(stats, qf.status(bufnr))
  check(#summary == 1 and summary[1]:match('^local %(local, ok%): %d+ requests, 0 errors, %d+%+%d+ tokens, p50/p90 %d+ / %d+ ms$'),
        'the stats view lists the source: ' .. vim.inspect(summary))

  -- Back to the text before the accepted ghost text, where the server had items (greedy decoding).
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
  vim.api.nvim_win_set_cursor(0, { 10, #line_before })

  -- Word by word: the accept-word function inserts the next word and keeps
  -- showing the rest; when the rest goes away, the words taken are reported
  -- as a partial acceptance.
  check(qf.next_word('foo(bar)') == 'foo' and qf.next_word('  (bar)') == '  (' and qf.next_word('\nx') == '\n'
        and qf.next_word('  ') == '  ', 'next_word splits words, punctuation, breaks and blanks')
  done, text = false, nil
  qf.ghost_request(bufnr, true, function(t) done, text = true, t end)
  check(vim.wait(WAIT, function() return done end, 20) and type(text) == 'string', 'inlineCompletion answered again')
  local word = qf.next_word(text)
  if word and #word < #text then
    check(qf.ghost_accept_word(bufnr), 'accepting a word inserts it')
    local now = table.concat(vim.api.nvim_buf_get_lines(bufnr, 9, -1, false), '\n')
    check(now:sub(1, #line_before + #word) == line_before .. word, 'buffer holds the accepted word: ' .. vim.inspect(now))
    local rest = vim.api.nvim_buf_get_extmarks(bufnr, vim.api.nvim_create_namespace('quickfill_ghost'), 0, -1, { details = true })
    check(#rest == 1, 'the rest of the suggestion is still shown')
    local before = ((((qf.stats(bufnr) or {}).acceptance or {}).bySource or {}).inline or {}).explicit or {}
    qf.ghost_clear(bufnr)
    local after = ((((qf.stats(bufnr) or {}).acceptance or {}).bySource or {}).inline or {}).explicit or {}
    check((after.partlyAccepted or 0) == (before.partlyAccepted or 0) + 1,
          'the words taken are reported as a partial acceptance: ' .. vim.inspect(after))
  else
    print('suggestion is one word (' .. vim.inspect(text) .. '); word-by-word acceptance not exercised')
  end
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
  vim.api.nvim_win_set_cursor(0, { 10, #line_before })

  -- Ghost text while typing, as a user gets it: in insert mode, a change fires
  -- TextChangedI, the debounced autocommand asks inlineCompletion (automatic
  -- trigger), draws it, and the accept key (<C-l>) inserts it.
  -- feedkeys('A', 'nx!') stays in insert mode until <Esc>: the steps run from
  -- timers meanwhile, and each result is checked once insert mode has ended.
  local ghost_ns = vim.api.nvim_create_namespace('quickfill_ghost')
  local key = function(k) return vim.api.nvim_replace_termcodes(k, true, false, true) end
  local r = {}
  -- <Esc> until insert mode has ended (the first one may only end a completion).
  local function leave()
    if vim.api.nvim_get_mode().mode:sub(1, 1) == 'i' then
      vim.api.nvim_feedkeys(key('<Esc>'), 'n', false)
      vim.defer_fn(leave, 50)
    end
  end
  -- Appends at the end of the line in insert mode and returns once it has ended;
  -- a timer leaves insert mode if the steps never do.
  local function insert_session()
    local safety = vim.defer_fn(leave, WAIT + 5000)
    vim.api.nvim_feedkeys('A', 'nx!', false)
    safety:stop()
    if not safety:is_closing() then safety:close() end
    vim.wait(150, function() return false end, 10)  -- let pending leave() timers find normal mode
  end
  vim.defer_fn(function()
    local ok, err = pcall(function()
      r.mode = vim.api.nvim_get_mode().mode
      vim.api.nvim_exec_autocmds('TextChangedI', { buffer = bufnr })
      r.appeared = vim.wait(WAIT, function()
        return #vim.api.nvim_buf_get_extmarks(bufnr, ghost_ns, 0, -1, {}) == 1
      end, 20)
      if r.appeared then
        r.shown = vim.api.nvim_buf_get_extmarks(bufnr, ghost_ns, 0, -1, { details = true })[1][4].virt_text[1][1]
      end
    end)
    r.err = not ok and err or nil
    if not r.appeared then return leave() end
    vim.api.nvim_feedkeys(key('<C-l>'), 'm', false)  -- the mapping runs once this callback returns
    vim.defer_fn(function()
      r.line = vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1]
      leave()
    end, 50)
  end, 10)
  insert_session()
  check(r.err == nil, 'no error in insert mode: ' .. tostring(r.err))
  check(r.mode == 'i', 'insert mode')
  check(r.appeared == true, 'ghost text appears after typing (debounced automatic request)')
  check(r.line == line_before .. r.shown or vim.fn.strtrans(r.line or '') == line_before .. r.shown,
        'the accept key inserts the ghost text: ' .. vim.inspect(r.line))
  check(vim.api.nvim_get_mode().mode == 'n', 'back in normal mode')
  check(#vim.api.nvim_buf_get_extmarks(bufnr, ghost_ns, 0, -1, {}) == 0, 'no ghost text outside insert mode')
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
  vim.api.nvim_win_set_cursor(0, { 10, #line_before })

  -- CTRL-X CTRL-U typed in insert mode: Vim calls quickfill's completefunc,
  -- which asks the server, and inserts the first item.
  -- (Headless Neovim 0.7 crashes when it draws the popup menu, so this runs
  -- with 'completeopt' "menu", which shows no popup for a single match.)
  vim.o.completeopt = 'menu'
  if #items == 1 then
    local r2 = {}
    local function poll(cond, then_fn, deadline)
      if cond() or vim.loop.now() > deadline then return then_fn() end
      vim.defer_fn(function() poll(cond, then_fn, deadline) end, 30)
    end
    vim.defer_fn(function()
      vim.api.nvim_feedkeys(key('<C-x><C-u>'), 'n', false)
      poll(function() return vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1] ~= line_before end, function()
        r2.line = vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1]
        r2.mode = vim.fn.complete_info({ 'mode' }).mode
        vim.defer_fn(leave, 20)
      end, vim.loop.now() + WAIT)
    end, 10)
    insert_session()
    check(r2.mode == 'function', 'CTRL-X CTRL-U ran the completefunc: ' .. vim.inspect(r2.mode))
    check(r2.line == line_before .. items[1].word, 'CTRL-X CTRL-U inserted the server item: ' .. vim.inspect(r2.line))
    vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
    vim.api.nvim_win_set_cursor(0, { 10, #line_before })
  else
    out('note: ' .. #items .. ' items; typing CTRL-X CTRL-U is only checked with one (no popup menu headless)')
  end

  -- Accepting a multi-line item: the further lines come from CompleteDone.
  local _, multi = qf.to_complete_items(bufnr, { { label = 'm', textEdit = { newText = 'x:\n        pass',
    range = { start = { line = 9, character = #line_before }, ['end'] = { line = 9, character = #line_before } } } } },
    9, #line_before)
  vim.defer_fn(function()
    vim.fn.complete(#line_before + 1, multi)  -- a single match is inserted at once
    vim.defer_fn(leave, 50)
  end, 10)
  insert_session()
  local after = vim.api.nvim_buf_get_lines(bufnr, 9, 11, false)
  check(after[1] == line_before .. 'x:' and after[2] == '        pass',
        'a multi-line item inserts all its lines: ' .. vim.inspect(after))
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
  vim.api.nvim_win_set_cursor(0, { 10, #line_before })

  -- Next edits: quickfill/nextEdit answers (any model, with a forced prompt
  -- format); an answer in the protocol's shape is drawn at its target, jumped
  -- to and accepted; shown and accepted suggestions reach quickfill/stats.
  local ne = require('quickfill.next_edit')
  qf.update_settings({ settings = { nextEdit = { format = 'sweep', maxTokens = 32 } } })
  local answer, nerr
  ne.request(bufnr, true, function(res, err) answer, nerr = res or false, err end)
  check(vim.wait(WAIT, function() return answer ~= nil end, 20), 'quickfill/nextEdit answers')
  check(type(answer) == 'table' and type(answer.id) == 'string' and answer.format == 'sweep'
        and type(answer.edits) == 'table', 'the answer has an id, the format and edits: ' .. vim.inspect(answer) .. ' ' .. tostring(nerr))
  ne.clear(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { '    ', '' })
  local drawn = ne.show(bufnr, { id = 'nvim-test-1', edits = { { newText = 'pass',
    range = { start = { line = 9, character = 4 }, ['end'] = { line = 9, character = 4 } } } } }, 'explicit')
  check(drawn == 1, 'one next edit drawn')
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, ne.namespace(), 0, -1, { details = true })
  check(#marks == 1 and marks[1][2] == 9 and marks[1][3] == 4 and marks[1][4].virt_text[1][1] == 'pass',
        'the new text is virtual text at the target: ' .. vim.inspect(marks))
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  check(ne.jump(bufnr) and vim.api.nvim_win_get_cursor(0)[1] == 10 and vim.api.nvim_win_get_cursor(0)[2] == 4,
        'jump moves the cursor to the edit')
  check(ne.accept(bufnr) and vim.api.nvim_buf_get_lines(bufnr, 9, 10, false)[1] == '    pass', 'accept applies the edit')
  check(#vim.api.nvim_buf_get_extmarks(bufnr, ne.namespace(), 0, -1, {}) == 0, 'nothing drawn after accepting')
  check(ne.show(bufnr, { id = 'nvim-test-2', edits = { { newText = 'x',
    range = { start = { line = 9, character = 0 }, ['end'] = { line = 9, character = 0 } } } } }, 'explicit') == 1, 'drawn again')
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# moved' })
  check(not ne.accept(bufnr), 'after a change the shown edit is not applied')
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, {})
  local st = qf.stats(bufnr)
  local acc = type(st) == 'table' and st.acceptance or {}
  local ne_counts = acc.bySource and acc.bySource.nextEdit.explicit or {}
  check(ne_counts.shown == 2 and ne_counts.accepted == 1 and ne_counts.acceptedChars == 4,
        'next edits shown and accepted reach quickfill/stats: ' .. vim.inspect(acc))
  local inl = acc.bySource and acc.bySource.inline.automatic or {}
  check((inl.shown or 0) >= 1 and (inl.accepted or 0) >= 1, 'the ghost text shown and accepted earlier was reported')
  local menu = acc.bySource and acc.bySource.completion.explicit or {}
  check((menu.shown or 0) >= 1, 'the completefunc menus were reported shown: ' .. vim.inspect(menu))
  if #items == 1 then
    check((menu.accepted or 0) >= 1, 'the item inserted by CTRL-X CTRL-U was reported accepted')
  end
  vim.api.nvim_buf_set_lines(bufnr, 9, -1, false, { line_before, '' })
  vim.api.nvim_win_set_cursor(0, { 10, #line_before })

  -- New settings go to the running server (workspace/didChangeConfiguration); it keeps answering.
  qf.update_settings({ settings = { completion = { autoDeadlineMs = 50000, explicitDeadlineMs = 50000 } } })
  local s3, items3 = qf.request_completion(bufnr, true)
  check(s3 ~= nil and #items3 > 0, 'items after a settings change')

  -- :QuickfillRestart starts a new server for the same buffer.
  local old_id = client.id
  vim.cmd('QuickfillRestart')
  local restarted
  check(vim.wait(WAIT, function()
    restarted = qf.get_client(bufnr)
    return restarted ~= nil and restarted.id ~= old_id and restarted.initialized == true
  end, 20), 'a new client after :QuickfillRestart')
  check(vim.wait(WAIT, function()
    local st = qf.status(bufnr)
    return type(st) == 'table' and st.modelLoaded == true
  end, 100), 'the restarted server loaded the model')
  local s4, items4 = qf.request_completion(bufnr, true)
  check(s4 ~= nil and #items4 > 0, 'items from the restarted server')

  -- Stop: the server exits after shutdown/exit.
  qf.stop()
  check(vim.wait(WAIT, function() return qf.get_client(bufnr) == nil end, 50), 'client stopped')
  return 0
end

-- On a failure: the tails of the server's log and of Neovim's LSP log.
t.finish(run, function()
  if log_file and vim.loop.fs_stat(log_file) then
    local lines = vim.fn.readfile(log_file)
    out('--- ' .. log_file .. ' (tail) ---')
    for i = math.max(1, #lines - 40), #lines do out(lines[i]) end
  end
  do
    local lines = vim.fn.readfile(vim.lsp.get_log_path())
    out('--- ' .. vim.lsp.get_log_path() .. ' (tail) ---')
    for i = math.max(1, #lines - 40), #lines do out(lines[i]) end
  end
end)
