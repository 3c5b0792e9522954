-- quickfill for Neovim's built-in LSP client (Neovim 0.7 and newer).
--
--   require('quickfill').setup{ model = '~/models/quickfill-tiny-code.gguf' }
--
-- setup() registers a FileType autocommand that starts (or reuses) one
-- `quickfill --stdio` per root directory and attaches it to the buffer:
-- vim.lsp.start where it exists (0.8+), vim.lsp.start_client +
-- vim.lsp.buf_attach_client on 0.7. Settings travel as initializationOptions
-- ({quickfill = {...}}), answer workspace/configuration, and are re-sent with
-- workspace/didChangeConfiguration by update_settings().
--
-- Completion: `completefunc` (CTRL-X CTRL-U) is set to quickfill's own
-- synchronous function, which asks textDocument/completion and honours each
-- item's textEdit (multi-line items insert their remaining lines on
-- CompleteDone); omnifunc can be left to vim.lsp.omnifunc. nvim-cmp users add
-- the `nvim_lsp` source instead (see docs/editors.md). Optional ghost text
-- asks textDocument/inlineCompletion while typing and draws the first line as
-- virtual text (extmarks), further lines as virtual lines; a key accepts it,
-- another its next word (the rest stays shown; the words taken count as a
-- partial acceptance), another shows the next of the answer's items (the
-- server returns several candidates for an explicit request, best first).
-- :QuickfillExplain shows quickfill/explainCompletion at the cursor (the
-- prompt a completion there would give the model) in a scratch buffer.
-- :QuickfillDashboard writes the server's dashboard page (quickfill/report)
-- to an HTML file and opens it in the browser.
-- :QuickfillDoctor runs `quickfill doctor` (the same binary, with the same
-- model) and shows its report in a scratch buffer: what to paste into a bug
-- report.
local M = {}

local NAME = 'quickfill'
local ns = vim.api.nvim_create_namespace('quickfill_ghost')

local defaults = {
  cmd = nil,                 -- full command; default { 'quickfill', '--stdio', ... } from the options below
  binary = 'quickfill',      -- binary (bare name: looked up on PATH)
  model = nil,               -- GGUF file (--model); nil: the server's default model
  log_level = nil,           -- --log-level (trace, debug, info, warn, error)
  log_file = nil,            -- --log-file
  settings = {},             -- further server settings, merged into the `quickfill` object
  filetypes = nil,           -- list of filetypes to attach to; nil: every normal file buffer
  exclude = {},              -- globs of files never attached, added to the built-in list (.env, keys, ...; privacy.lua); also sent to the server
  disabled_filetypes = {},   -- filetypes never attached; also sent to the server (privacy.disabledLanguages)
  root_markers = { '.git', '.hg', 'compile_commands.json', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  completefunc = true,       -- set 'completefunc' to quickfill's (CTRL-X CTRL-U)
  omnifunc = false,          -- set 'omnifunc' to vim.lsp.omnifunc (CTRL-X CTRL-O)
  timeout_ms = 10000,        -- how long completefunc waits for an answer
  ghost_text = false,        -- true or a table { debounce_ms = 150, accept_key = '<C-l>', accept_word_key = '<M-Right>', hl = 'Comment' }
  next_edit = false,         -- true or a table { accept_key = '<M-y>', jump_key = '<M-n>', auto = false } (next_edit.lua)
  on_attach = nil,           -- function(client, bufnr)
  capabilities = nil,        -- client capabilities override
  open_dashboard = nil,      -- function(path) that opens the dashboard page; nil: vim.ui.open or xdg-open
}

M.config = vim.deepcopy(defaults)
local ghost_defaults = { debounce_ms = 150, accept_key = '<C-l>', accept_word_key = '<M-Right>', cycle_key = '<M-]>',
                         hl = 'Comment' }

-- ---------------------------------------------------------------------------
-- helpers

local function has_start() return vim.lsp.start ~= nil end

local function expand(p)
  if p == nil or p == '' then return p end
  return vim.fn.expand(p)
end

local function merge(a, b) return vim.tbl_deep_extend('force', a or {}, b or {}) end

-- The `quickfill` settings object the server reads. The model is not in it:
-- the server takes file paths only from the user (the command line and
-- ~/.config/quickfill/config.json), never from the settings object, which a
-- repository's .nvim.lua could shape (docs/security.md).
function M.server_settings(cfg)
  cfg = cfg or M.config
  local s = vim.deepcopy(cfg.settings or {})
  -- The privacy lists: the server adds them to its own (they can only exclude more).
  local function add(key, list)
    if type(list) ~= 'table' or #list == 0 then return end
    s.privacy = type(s.privacy) == 'table' and s.privacy or {}
    s.privacy[key] = vim.list_extend(vim.deepcopy(s.privacy[key] or {}), list)
  end
  add('exclude', cfg.exclude)
  add('disabledLanguages', cfg.disabled_filetypes)
  return s
end

-- The command line: the model goes here as --model (with `cmd`, put it there yourself).
function M.command(cfg)
  cfg = cfg or M.config
  if cfg.cmd then return cfg.cmd end
  local cmd = { expand(cfg.binary), '--stdio' }
  if cfg.model and cfg.model ~= '' then vim.list_extend(cmd, { '--model', expand(cfg.model) }) end
  if cfg.log_level then vim.list_extend(cmd, { '--log-level', cfg.log_level }) end
  if cfg.log_file then vim.list_extend(cmd, { '--log-file', expand(cfg.log_file) }) end
  return cmd
end

local function find_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.loop.cwd()
  local cur = dir
  while true do
    for _, marker in ipairs(M.config.root_markers or {}) do
      if vim.loop.fs_stat(cur .. '/' .. marker) then return cur end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then break end
    cur = parent
  end
  return dir
end

-- Client methods: `client:method(...)` from 0.11 on, `client.method(...)` before.
local new_style = vim.fn.has('nvim-0.11') == 1
local function call(client, method, ...)
  if new_style then return client[method](client, ...) end
  return client[method](...)
end

local function quickfill_clients(bufnr)
  local out = {}
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil)
  elseif bufnr then
    all = vim.lsp.buf_get_clients(bufnr)
  else
    all = vim.lsp.get_active_clients()
  end
  for _, c in pairs(all) do
    if c.name == NAME then table.insert(out, c) end
  end
  return out
end

-- UTF-16 <-> byte columns. Neovim 0.11 changed the signatures of
-- vim.str_utfindex / vim.str_byteindex (an encoding argument first).
local new_index_api = vim.fn.has('nvim-0.11') == 1

local function utf16_col(line, byte_col)
  if new_index_api then return vim.str_utfindex(line, 'utf-16', byte_col, false) end
  local _, utf16 = vim.str_utfindex(line, byte_col)
  return utf16
end

-- LSP position (UTF-16 character) of byte column `byte_col` on `row`.
local function lsp_position(bufnr, row, byte_col)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  byte_col = math.min(byte_col, #line)
  return { line = row, character = utf16_col(line, byte_col) }
end

-- Byte column of an LSP UTF-16 position on `row` (clamped to the line's end).
local function byte_col(bufnr, row, character)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  local ok, col
  if new_index_api then
    ok, col = pcall(vim.str_byteindex, line, 'utf-16', character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, true)
  end
  if not ok or col == nil then return #line end
  return math.min(col, #line)
end

-- For next_edit.lua.
M._call, M._utf16_col, M._byte_col, M._lsp_position = call, utf16_col, byte_col, lsp_position

function M.get_client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return quickfill_clients(bufnr)[1]
end

-- ---------------------------------------------------------------------------
-- starting and attaching

local clients_by_root = {}  -- root_dir -> client id (0.7 path)

local function make_config(root_dir)
  local settings = M.server_settings()
  return {
    name = NAME,
    cmd = M.command(),
    root_dir = root_dir,
    workspace_folders = { { uri = vim.uri_from_fname(root_dir), name = root_dir } },
    init_options = { quickfill = settings },
    settings = { quickfill = settings },
    capabilities = M.config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    flags = { debounce_text_changes = 50 },
    on_attach = function(client, bufnr) M._on_attach(client, bufnr) end,
    on_exit = function(code, signal)
      clients_by_root[root_dir] = nil
      M.last_exit = { code = code, signal = signal }
    end,
  }
end

-- Why the buffer is private (never attached, so never sent; privacy.lua), or nil.
function M.private_reason(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return require('quickfill.privacy').why_private(vim.api.nvim_buf_get_name(bufnr), vim.bo[bufnr].filetype,
    M.config.exclude, M.config.disabled_filetypes, { find_root(bufnr) }, vim.loop.os_homedir())
end

function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then return nil end
  if M.private_reason(bufnr) then return nil end
  local root = find_root(bufnr)
  local config = make_config(root)
  if has_start() then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not id or not vim.lsp.get_client_by_id(id) or call(vim.lsp.get_client_by_id(id), 'is_stopped') then
    id = vim.lsp.start_client(config)
    if not id then return nil end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

function M._on_attach(client, bufnr)
  if M.config.completefunc then
    vim.bo[bufnr].completefunc = "v:lua.require'quickfill'.completefunc"
  end
  if M.config.omnifunc then
    vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  end
  if M.config.ghost_text then M._enable_ghost(bufnr) end
  if M.config.next_edit then require('quickfill.next_edit').enable(bufnr, M.config.next_edit) end
  if M.config.on_attach then M.config.on_attach(client, bufnr) end
end

-- Sends the current settings to every running quickfill client; a change of
-- the command line (model, binary, log options) restarts them instead.
function M.update_settings(opts)
  local before = vim.inspect(M.command())
  if opts then
    M.config = merge(M.config, opts)
  end
  if vim.inspect(M.command()) ~= before then return M.restart() end
  local settings = M.server_settings()
  for _, c in ipairs(quickfill_clients()) do
    c.config.settings = { quickfill = settings }
    call(c, 'notify', 'workspace/didChangeConfiguration', { settings = { quickfill = settings } })
  end
end

function M.stop()
  for _, c in ipairs(quickfill_clients()) do call(c, 'stop') end
  clients_by_root = {}
end

function M.restart()
  local bufs = {}
  for _, c in ipairs(quickfill_clients()) do
    for b, _ in pairs(c.attached_buffers or {}) do table.insert(bufs, b) end
  end
  M.stop()
  vim.wait(5000, function() return #quickfill_clients() == 0 end, 50)
  for _, b in ipairs(bufs) do
    if vim.api.nvim_buf_is_valid(b) then M.attach(b) end
  end
end

local function request_sync(method, params, bufnr, timeout_ms)
  local client = M.get_client(bufnr)
  if not client then return nil, 'no quickfill client attached' end
  local resp, err = call(client, 'request_sync', method, params, timeout_ms or 5000, bufnr or 0)
  if not resp then return nil, err or 'timeout' end
  if resp.err then return nil, resp.err.message end
  return resp.result
end

-- quickfill/stats: request counts, latency percentiles (totalMs, ttftMs) and
-- the most recent requests (`recent`, oldest first); nil and a message on failure.
function M.stats(bufnr, timeout_ms)
  return request_sync('quickfill/stats', vim.empty_dict(), bufnr, timeout_ms)
end

-- One line per completion source (quickfill/stats `sources`, the state and
-- last error from quickfill/status `sources`): "cloud (openai, ok): 12
-- requests, 1 error, 3400+210 tokens, p50/p90 180 / 420 ms".
function M.sources_summary(stats, status)
  local lines = {}
  local health = {}
  for _, h in ipairs(type(status) == 'table' and type(status.sources) == 'table' and status.sources or {}) do
    if type(h) == 'table' and h.name then health[h.name] = h end
  end
  for _, s in ipairs(type(stats) == 'table' and type(stats.sources) == 'table' and stats.sources or {}) do
    if type(s) == 'table' and type(s.name) == 'string' then
      local h = health[s.name] or {}
      local n, e = tonumber(s.requests) or 0, tonumber(s.errors) or 0
      local line = string.format('%s (%s, %s): %d request%s, %d error%s, %d+%d tokens', s.name, tostring(s.kind),
        tostring(h.state or s.state), n, n == 1 and '' or 's', e, e == 1 and '' or 's',
        tonumber(s.promptTokens) or 0, tonumber(s.completionTokens) or 0)
      local lat = type(s.latencyMs) == 'table' and s.latencyMs or {}
      if (tonumber(lat.count) or 0) > 0 then
        line = line .. string.format(', p50/p90 %d / %d ms', math.floor(lat.p50 + 0.5), math.floor(lat.p90 + 0.5))
      end
      if type(h.lastError) == 'string' and h.lastError ~= '' then line = line .. ' -- last error: ' .. h.lastError end
      table.insert(lines, line)
    end
  end
  return lines
end

-- quickfill/report: the dashboard page (self-contained HTML: latency
-- histograms, percentiles over time, the SLO's burn) written to `path`
-- (default: quickfill-dashboard.html in the cache folder); the path, or nil
-- and a message on failure.
function M.write_dashboard(path, bufnr, timeout_ms)
  local result, err = request_sync('quickfill/report', vim.empty_dict(), bufnr, timeout_ms)
  if not result then return nil, err end
  if type(result.html) ~= 'string' then return nil, 'quickfill/report: the answer has no html' end
  path = path or (vim.fn.stdpath('cache') .. '/quickfill-dashboard.html')
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f, open_err = io.open(path, 'wb')
  if not f then return nil, open_err end
  f:write(result.html)
  f:close()
  return path
end

-- :QuickfillDashboard: write the page and open it with vim.ui.open (Neovim
-- 0.10+), else xdg-open / open; M.config.open_dashboard(path) replaces both.
function M.open_dashboard()
  local path, err = M.write_dashboard()
  if not path then
    vim.notify('quickfill: ' .. tostring(err), vim.log.levels.ERROR)
    return nil, err
  end
  if M.config.open_dashboard then
    M.config.open_dashboard(path)
  elseif vim.ui and vim.ui.open then
    vim.ui.open(path)
  else
    vim.fn.jobstart({ vim.fn.has('mac') == 1 and 'open' or 'xdg-open', path }, { detach = true })
  end
  vim.notify('quickfill: dashboard ' .. path)
  return path
end

-- quickfill/status: modelLoaded, modelLoading, model (description), modelPath, noModelReason,
-- daemon (null in process; else pid, socket, sessions, engines, sessionsOnEngine).
function M.status(bufnr, timeout_ms)
  return request_sync('quickfill/status', vim.empty_dict(), bufnr, timeout_ms)
end

-- ---------------------------------------------------------------------------
-- completion

-- Converts a CompletionList / CompletionItem[] to a start byte column and
-- complete-items (:help complete-items) for the cursor at (row, col).
function M.to_complete_items(bufnr, result, row, col)
  local items = {}
  if type(result) == 'table' then items = result.items or result end
  local start = col
  local out = {}
  for _, it in ipairs(items) do
    local text, srow, scol = nil, row, col
    local edit = it.textEdit
    if type(edit) == 'table' and type(edit.newText) == 'string' then
      text = edit.newText
      local range = edit.range or edit.replace or edit.insert
      if range then
        srow = range.start.line
        scol = byte_col(bufnr, range.start.line, range.start.character)
      end
    else
      text = type(it.insertText) == 'string' and it.insertText or it.label
    end
    if type(text) == 'string' and text ~= '' and srow == row and scol <= col then
      -- Items whose edit starts before the cursor include the text being replaced.
      if scol < start then start = scol end
      table.insert(out, { scol = scol, text = text, item = it })
    end
  end
  local complete = {}
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  for _, e in ipairs(out) do
    -- Complete-items all replace from `start`: prepend what lies between start and this item's start.
    local text = line:sub(start + 1, e.scol) .. e.text
    local first, rest = text:match('^([^\n]*)\n(.*)$')
    if not first then first = text end
    table.insert(complete, {
      word = first,
      abbr = (e.item.label and e.item.label ~= '' and e.item.label or first):gsub('\n.*', '…'),
      menu = '[qf]',
      info = text,
      icase = 1,
      dup = 1,
      empty = 0,
      user_data = { quickfill = { rest = rest } },
    })
  end
  return start, complete
end

local pending = nil  -- {start, items} between the two completefunc calls

-- Synchronously asks textDocument/completion at the cursor. Returns
-- (start_byte_col, complete_items) or nil and a message.
function M.request_completion(bufnr, explicit)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get_client(bufnr)
  if not client then return nil, 'no quickfill client attached' end
  local cur = vim.api.nvim_win_get_cursor(0)
  local row, col = cur[1] - 1, cur[2]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = lsp_position(bufnr, row, col),
    context = { triggerKind = explicit == false and 3 or 1 },
  }
  local resp, err = call(client, 'request_sync', 'textDocument/completion', params, M.config.timeout_ms, bufnr)
  if not resp then return nil, err or 'timeout' end
  if resp.err then return nil, resp.err.message end
  local start, items = M.to_complete_items(bufnr, resp.result, row, col)
  return start, items, resp.result
end

-- quickfill/explainCompletion at the cursor: the prompt a completion there
-- would give the model ({format, prompt, tokens, parts = {{kind, origin, text,
-- tokens}}}), or nil and a message.
function M.explain(bufnr, timeout_ms)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local cur = vim.api.nvim_win_get_cursor(0)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = lsp_position(bufnr, cur[1] - 1, cur[2]),
  }
  return request_sync('quickfill/explainCompletion', params, bufnr, timeout_ms or M.config.timeout_ms)
end

-- The lines :QuickfillExplain shows: a table of the parts, then the prompt.
function M.explanation_lines(result)
  local lines = {
    string.format('quickfill prompt: %s format, %d tokens in %d parts', result.format, result.tokens, #result.parts),
    '',
    string.format('%-10s %7s  %s', 'part', 'tokens', 'origin'),
  }
  for _, p in ipairs(result.parts) do
    table.insert(lines, string.format('%-10s %7d  %s', p.kind, p.tokens, p.origin ~= '' and p.origin or '-'))
  end
  -- The confidence gate of each trigger kind and where it came from (setting, calibrated FILE, default).
  for _, kind in ipairs({ 'automatic', 'explicit' }) do
    local g = type(result.gate) == 'table' and result.gate[kind] or nil
    if type(g) == 'table' and type(g.threshold) == 'number' then
      table.insert(lines, string.format('confidence gate, %s triggers: %.2f (%s)', kind, g.threshold, tostring(g.origin)))
    end
  end
  table.insert(lines, '')
  table.insert(lines, '----- prompt -----')
  vim.list_extend(lines, vim.split(result.prompt, '\n', { plain = true }))
  table.insert(lines, '----- end of prompt -----')
  return lines
end

-- `quickfill doctor` for the binary and model the server is started with:
-- its report's lines and exit status (0: no check failed).
function M.doctor_lines()
  local cmd = M.command()
  local args = { cmd[1], 'doctor' }
  for i = 2, #cmd - 1 do
    if cmd[i] == '--model' or cmd[i] == '--socket-dir' then vim.list_extend(args, { cmd[i], cmd[i + 1] }) end
  end
  local output = vim.fn.system(args)
  local code = vim.v.shell_error
  local lines = vim.split(output, '\n', { plain = true })
  if lines[#lines] == '' then table.remove(lines) end
  return lines, code
end

-- A new window on a scratch buffer named `name` holding `lines` (read-only, wiped when hidden).
local function scratch_buffer(name, lines)
  vim.cmd('new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

-- :QuickfillDoctor: the report in a scratch buffer.
function M.doctor()
  local lines, code = M.doctor_lines()
  local buf = scratch_buffer('quickfill://doctor', lines)
  if code ~= 0 then vim.notify('quickfill doctor found problems (see the report)', vim.log.levels.WARN) end
  return buf, code
end

-- :QuickfillExplain: the explanation in a scratch buffer.
function M.explain_buffer()
  local result, err = M.explain(0)
  if not result then
    vim.notify('quickfill: ' .. tostring(err), vim.log.levels.ERROR)
    return nil, err
  end
  return scratch_buffer('quickfill://explain', M.explanation_lines(result))
end

-- 'completefunc' (see :help complete-functions).
function M.completefunc(findstart, base)
  if findstart == 1 then
    local start, items = M.request_completion(0, true)
    if not start then
      pending = nil
      return -3  -- cancel silently, stay in insert mode
    end
    pending = { start = start, items = items }
    if #items > 0 then
      -- The menu is reported shown once (its first item's length); accepting any item accepts it.
      local ne = require('quickfill.next_edit')
      local id = ne.new_id('completion')
      for _, it in ipairs(items) do it.user_data.quickfill.id = id end
      ne.report_shown(0, id, 'completion', 'explicit', ne.utf16_len(items[1].info))
    end
    return start
  end
  local p = pending
  pending = nil
  if not p then return {} end
  if base == nil or base == '' then return p.items end
  local out = {}
  for _, it in ipairs(p.items) do
    if vim.startswith(it.word, base) then table.insert(out, it) end
  end
  return out
end

-- After a multi-line item is accepted, insert its remaining lines.
function M._on_complete_done()
  local item = vim.v.completed_item
  if type(item) ~= 'table' or type(item.user_data) ~= 'table' then return end
  local qf = item.user_data.quickfill
  if type(qf) ~= 'table' then return end
  if type(qf.id) == 'string' then
    local ne = require('quickfill.next_edit')
    ne.report_accepted(0, qf.id, ne.utf16_len(item.info or item.word or ''))
  end
  if type(qf.rest) ~= 'string' then return end
  local cur = vim.api.nvim_win_get_cursor(0)
  local lines = vim.split(qf.rest, '\n', { plain = true })
  vim.api.nvim_buf_set_text(0, cur[1] - 1, cur[2], cur[1] - 1, cur[2], vim.list_extend({ '' }, lines))
  vim.api.nvim_win_set_cursor(0, { cur[1] + #lines, #lines[#lines] })
end

-- ---------------------------------------------------------------------------
-- ghost text (textDocument/inlineCompletion drawn with extmarks)

local ghost = {}  -- bufnr -> { text, row, col, tick, timer }

-- Removes the ghost text. When part of it was taken word by word, that part
-- is reported accepted now (a partial acceptance).
function M.ghost_clear(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local g = ghost[bufnr]
  if g then
    if g.text and g.id and (g.accepted or 0) > 0 then
      require('quickfill.next_edit').report_accepted(bufnr, g.id, g.accepted)
    end
    g.text, g.accepted, g.keep = nil, 0, nil
  end
end

local function ghost_opts()
  local g = M.config.ghost_text
  return merge(ghost_defaults, type(g) == 'table' and g or {})
end

-- Draws `text` at (row, col): the first line at the cursor, the rest as virtual lines.
local function ghost_draw(bufnr, row, col, text)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local lines = vim.split(text, '\n', { plain = true })
  local hl = ghost_opts().hl
  local opts = { virt_text = { { lines[1], hl } }, hl_mode = 'combine' }
  if vim.fn.has('nvim-0.10') == 1 then
    opts.virt_text_pos = 'inline'
  else
    opts.virt_text_pos = 'overlay'
    local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    if col >= #line then opts.virt_text_pos = 'eol' end
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do table.insert(opts.virt_lines, { { lines[i], hl } }) end
  end
  vim.api.nvim_buf_set_extmark(bufnr, ns, row, col, opts)
end

-- Shows `text` as a new suggestion (reported shown).
function M.ghost_show(bufnr, row, col, text, explicit)
  M.ghost_clear(bufnr)
  ghost_draw(bufnr, row, col, text)
  ghost[bufnr] = ghost[bufnr] or {}
  local g = ghost[bufnr]
  g.text, g.row, g.col, g.tick = text, row, col, vim.api.nvim_buf_get_changedtick(bufnr)
  local ne = require('quickfill.next_edit')
  g.id, g.length, g.explicit = ne.new_id('inline'), ne.utf16_len(text), explicit
  ne.report_shown(bufnr, g.id, 'inline', explicit and 'explicit' or 'automatic', g.length)
  g.texts, g.index = { text }, 1
end

-- Shows the next of the last answer's items (after the last, the first
-- again). Returns the text shown, or nil when there is nothing to cycle.
function M.ghost_cycle(bufnr, step)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local g = ghost[bufnr]
  if not g or not g.text or not g.texts or g.tick ~= vim.api.nvim_buf_get_changedtick(bufnr) then return nil end
  local texts, n = g.texts, #g.texts
  local index = (g.index - 1 + (step or 1)) % n + 1
  M.ghost_show(bufnr, g.row, g.col, texts[index], g.explicit)
  g.texts, g.index = texts, index
  return texts[index]
end

-- Asks textDocument/inlineCompletion at the cursor; draws the first item.
-- `callback(text_or_nil)` runs once the answer is handled.
function M.ghost_request(bufnr, explicit, callback)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get_client(bufnr)
  if not client then
    if callback then callback(nil) end
    return
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local row, col = cur[1] - 1, cur[2]
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = lsp_position(bufnr, row, col),
    context = { triggerKind = explicit and 1 or 2 },
  }
  call(client, 'request', 'textDocument/inlineCompletion', params, function(err, result)
    local text = nil
    -- Draw only if nothing moved on: same text, same cursor, and (for requests
    -- made while typing) still in insert mode in that buffer.
    local still = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_changedtick(bufnr) == tick
      and vim.api.nvim_get_current_buf() == bufnr
    if still then
      local now = vim.api.nvim_win_get_cursor(0)
      still = now[1] - 1 == row and now[2] == col
        and (explicit or vim.api.nvim_get_mode().mode:sub(1, 1) == 'i')
    end
    if not err and type(result) == 'table' and still then
      local texts = {}
      for _, it in ipairs(result.items or result) do
        local t = type(it.insertText) == 'table' and it.insertText.value or it.insertText
        if it.range and type(t) == 'string' then
          -- Drop the part of the item that replaces text before the cursor (already typed).
          local scol = byte_col(bufnr, it.range.start.line, it.range.start.character)
          local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
          local typed = line:sub(scol + 1, col)
          if it.range.start.line == row and vim.startswith(t, typed) then
            t = t:sub(#typed + 1)
          end
        end
        if type(t) == 'string' and t ~= '' then table.insert(texts, t) end
      end
      if #texts > 0 then
        text = texts[1]
        M.ghost_show(bufnr, row, col, text, explicit)
        ghost[bufnr].texts = texts
      end
    end
    if callback then callback(text) end
  end, bufnr)
end

-- Inserts the shown ghost text at the cursor. Returns true when something was inserted.
function M.ghost_accept(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local g = ghost[bufnr]
  if not g or not g.text or g.tick ~= vim.api.nvim_buf_get_changedtick(bufnr) then return false end
  local text, id, length = g.text, g.id, g.length
  g.accepted = 0  -- all of it is reported below, not a part
  M.ghost_clear(bufnr)
  local lines = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(bufnr, g.row, g.col, g.row, g.col, lines)
  local last_row = g.row + #lines - 1
  local last_col = (#lines == 1 and g.col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { last_row + 1, last_col })
  if id then require('quickfill.next_edit').report_accepted(bufnr, id, length) end
  return true
end

-- The next word of a suggestion: a line break, or blanks and then a run of
-- word characters or of other non-blank characters, or trailing blanks.
function M.next_word(text)
  return text:match('^\r?\n') or text:match('^[ \t]*[%w_]+') or text:match('^[ \t]*[^%w_%s]+')
    or text:match('^[ \t]+')
end

-- Inserts the shown ghost text's next word and keeps showing the rest (the
-- same suggestion: what is taken this way is reported, as a partial
-- acceptance, when the rest goes away; taking the last word accepts it all).
-- Returns true when something was inserted.
function M.ghost_accept_word(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local g = ghost[bufnr]
  if not g or not g.text or g.tick ~= vim.api.nvim_buf_get_changedtick(bufnr) then return false end
  local word = M.next_word(g.text)
  if not word then return false end
  if #word >= #g.text then return M.ghost_accept(bufnr) end
  local lines = vim.split(word, '\r?\n')
  vim.api.nvim_buf_set_text(bufnr, g.row, g.col, g.row, g.col, lines)
  g.row = g.row + #lines - 1
  g.col = (#lines == 1 and g.col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { g.row + 1, g.col })
  g.text = g.text:sub(#word + 1)
  g.accepted = (g.accepted or 0) + require('quickfill.next_edit').utf16_len(word)
  g.tick = vim.api.nvim_buf_get_changedtick(bufnr)
  g.keep = { tick = g.tick, row = g.row, col = g.col }  -- the autocommands this change fires keep it
  g.texts, g.index = { g.text }, 1
  ghost_draw(bufnr, g.row, g.col, g.text)
  return true
end

function M._enable_ghost(bufnr)
  local opts = ghost_opts()
  local group = vim.api.nvim_create_augroup('quickfill_ghost_' .. bufnr, { clear = true })
  ghost[bufnr] = ghost[bufnr] or {}
  local function schedule_request()
    local g = ghost[bufnr]
    if g.timer then g.timer:stop(); g.timer:close() end
    g.timer = vim.loop.new_timer()
    g.timer:start(opts.debounce_ms, 0, vim.schedule_wrap(function()
      if g.timer then g.timer:close(); g.timer = nil end
      if vim.api.nvim_get_current_buf() == bufnr and vim.api.nvim_get_mode().mode:sub(1, 1) == 'i' then
        M.ghost_request(bufnr, false)
      end
    end))
  end
  vim.api.nvim_create_autocmd({ 'TextChangedI', 'CursorMovedI' }, {
    group = group, buffer = bufnr,
    callback = function()
      -- The change and the cursor move of an accepted word leave the rest shown.
      local g, cur = ghost[bufnr], vim.api.nvim_win_get_cursor(0)
      local k = g and g.keep
      if k and k.tick == vim.api.nvim_buf_get_changedtick(bufnr) and k.row == cur[1] - 1 and k.col == cur[2] then
        return
      end
      M.ghost_clear(bufnr)
      schedule_request()
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group, buffer = bufnr, callback = function() M.ghost_clear(bufnr) end,
  })
  -- Each key runs its action, or types itself when there is nothing to act on.
  -- Not <expr> mappings: those may not change the buffer (textlock).
  local function map(key, action, desc)
    if not key or key == '' then return end
    vim.keymap.set('i', key, function()
      if not action() then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
      end
    end, { buffer = bufnr, desc = desc })
  end
  map(opts.accept_key, function() return M.ghost_accept(bufnr) end, 'quickfill: accept ghost text')
  map(opts.accept_word_key, function() return M.ghost_accept_word(bufnr) end,
      'quickfill: accept the next word of the ghost text')
  map(opts.cycle_key, function() return M.ghost_cycle(bufnr, 1) end, 'quickfill: next suggestion')
end

-- ---------------------------------------------------------------------------
-- setup

function M.setup(opts)
  M.config = merge(vim.deepcopy(defaults), opts or {})
  local group = vim.api.nvim_create_augroup('quickfill', { clear = true })
  local fts = M.config.filetypes
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = fts and table.concat(fts, ',') or '*',
    callback = function(args)
      if vim.bo[args.buf].buftype == '' and vim.api.nvim_buf_get_name(args.buf) ~= '' then M.attach(args.buf) end
    end,
  })
  vim.api.nvim_create_autocmd('CompleteDone', { group = group, callback = M._on_complete_done })
  vim.api.nvim_create_user_command('QuickfillRestart', M.restart, { desc = 'Restart the quickfill server' })
  vim.api.nvim_create_user_command('QuickfillStop', M.stop, { desc = 'Stop the quickfill server' })
  vim.api.nvim_create_user_command('QuickfillStats', function()
    local st, err = M.status()
    local s = M.stats()
    if not st then
      print('quickfill: ' .. tostring(err))
      return
    end
    local sources = M.sources_summary(s, st)
    local head = #sources > 0 and ('Completion sources:\n  ' .. table.concat(sources, '\n  ') .. '\n') or ''
    print(head .. vim.inspect({ status = st, stats = s }))
  end, { desc = 'Show quickfill/status and quickfill/stats' })
  vim.api.nvim_create_user_command('QuickfillDashboard', function() M.open_dashboard() end,
                                   { desc = 'Write the quickfill dashboard page and open it in the browser' })
  vim.api.nvim_create_user_command('QuickfillNextEdit', function() require('quickfill.next_edit').request(0, true) end,
    { desc = 'Ask for the next edit at the cursor and show it' })
  vim.api.nvim_create_user_command('QuickfillDoctor', function() M.doctor() end,
    { desc = 'Run quickfill doctor and show its report' })
  vim.api.nvim_create_user_command('QuickfillExplain', function() M.explain_buffer() end,
    { desc = 'Show the prompt a completion at the cursor would give the model' })
  vim.api.nvim_create_user_command('QuickfillLog', function()
    vim.cmd('tabnew ' .. vim.fn.fnameescape(M.config.log_file and expand(M.config.log_file) or vim.lsp.get_log_path()))
  end, { desc = "Open the server's log" })
  -- Buffers already open when setup() runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and vim.api.nvim_buf_get_name(b) ~= '' then
      local ft = vim.bo[b].filetype
      if ft ~= '' and (not fts or vim.tbl_contains(fts, ft)) then M.attach(b) end
    end
  end
end

return M
