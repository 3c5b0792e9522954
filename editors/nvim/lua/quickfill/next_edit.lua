-- Next-edit suggestions and acceptance reports for quickfill in Neovim.
--
--   require('quickfill').setup{ next_edit = { accept_key = '<M-y>', jump_key = '<M-n>', auto = true } }
--
-- request() asks quickfill/nextEdit at the cursor; show() draws the predicted
-- edits as virtual text at their targets (the text an edit replaces is
-- highlighted, its new text follows it; further lines as virtual lines);
-- accept() applies them, jump() moves the cursor to the first one. With
-- `auto`, a request goes out when the cursor rests in normal mode
-- (CursorHold) and after leaving insert mode; any change clears what is shown.
--
-- Acceptance: everything shown is reported with quickfill/didShow (id,
-- source, trigger, length) and what is taken with quickfill/didAccept (id,
-- acceptedLength); lengths are UTF-16 units, the client's position encoding.
-- The counts stay in the server (quickfill/stats, `acceptance`).
local M = {}

local ns = vim.api.nvim_create_namespace('quickfill_next_edit')
local state = {}  -- bufnr -> { id, edits = { {srow, scol, erow, ecol, text} }, tick, length }
local defaults = { accept_key = '<M-y>', jump_key = '<M-n>', auto = false, hl_old = 'DiffDelete', hl_new = 'DiffAdd' }
local shown_ids = 0

local function qf() return require('quickfill') end

-- UTF-16 length of a text.
function M.utf16_len(text) return qf()._utf16_col(text, #text) end

-- quickfill/didShow and quickfill/didAccept (no answer is expected).
function M.report_shown(bufnr, id, source, trigger, length)
  local client = qf().get_client(bufnr)
  if not client then return end
  qf()._call(client, 'notify', 'quickfill/didShow', { id = id, source = source, trigger = trigger, length = length })
end

function M.report_accepted(bufnr, id, accepted_length)
  local client = qf().get_client(bufnr)
  if not client then return end
  qf()._call(client, 'notify', 'quickfill/didAccept', { id = id, acceptedLength = accepted_length })
end

-- A fresh id for a suggestion the client shows (inline completions have none from the server).
function M.new_id(prefix)
  shown_ids = shown_ids + 1
  return string.format('%s-%d-%d', prefix, vim.loop.getpid(), shown_ids)
end

function M.clear(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.api.nvim_buf_is_valid(bufnr) then vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1) end
  state[bufnr] = nil
end

function M.namespace() return ns end
function M.current(bufnr) return state[(bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr] end

-- Draws a quickfill/nextEdit result; returns the number of edits shown.
function M.show(bufnr, result, trigger, opts)
  opts = vim.tbl_extend('force', defaults, opts or {})
  M.clear(bufnr)
  if type(result) ~= 'table' or type(result.edits) ~= 'table' or #result.edits == 0 then return 0 end
  local edits, length = {}, 0
  for _, e in ipairs(result.edits) do
    local r = e.range
    local srow, erow = r.start.line, r['end'].line
    local scol = qf()._byte_col(bufnr, srow, r.start.character)
    local ecol = qf()._byte_col(bufnr, erow, r['end'].character)
    table.insert(edits, { srow, scol, erow, ecol, e.newText })
    length = length + M.utf16_len(e.newText)
  end
  for _, e in ipairs(edits) do
    local srow, scol, erow, ecol, text = e[1], e[2], e[3], e[4], e[5]
    if srow ~= erow or scol ~= ecol then
      vim.api.nvim_buf_set_extmark(bufnr, ns, srow, scol, { end_row = erow, end_col = ecol, hl_group = opts.hl_old })
    end
    local lines = vim.split(text, '\n', { plain = true })
    local mark = { virt_text = { { lines[1] ~= '' and lines[1] or ' ', opts.hl_new } }, hl_mode = 'combine' }
    local line = vim.api.nvim_buf_get_lines(bufnr, erow, erow + 1, false)[1] or ''
    if vim.fn.has('nvim-0.10') == 1 then
      mark.virt_text_pos = 'inline'
    else
      mark.virt_text_pos = ecol >= #line and 'eol' or 'overlay'
    end
    if #lines > 1 then
      mark.virt_lines = {}
      for i = 2, #lines do table.insert(mark.virt_lines, { { lines[i], opts.hl_new } }) end
    end
    vim.api.nvim_buf_set_extmark(bufnr, ns, erow, ecol, mark)
  end
  state[bufnr] = { id = result.id, edits = edits, tick = vim.api.nvim_buf_get_changedtick(bufnr), length = length }
  M.report_shown(bufnr, result.id, 'nextEdit', trigger or 'explicit', length)
  return #edits
end

-- Asks quickfill/nextEdit at the cursor and shows the answer if the buffer
-- did not change meanwhile. `callback(result_or_nil, err)` runs afterwards.
function M.request(bufnr, explicit, callback, opts)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = qf().get_client(bufnr)
  if not client then
    if callback then callback(nil, 'no quickfill client attached') end
    return
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local doc = { uri = vim.uri_from_bufnr(bufnr) }
  local versions = vim.lsp.util.buf_versions
  if versions and type(versions[bufnr]) == 'number' then doc.version = versions[bufnr] end
  local params = { textDocument = doc, position = qf()._lsp_position(bufnr, cur[1] - 1, cur[2]) }
  qf()._call(client, 'request', 'quickfill/nextEdit', params, function(err, result)
    local current = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_changedtick(bufnr) == tick
    if not err and current then M.show(bufnr, result, explicit and 'explicit' or 'automatic', opts) end
    if callback then callback(not err and result or nil, err and err.message or nil) end
  end, bufnr)
end

-- Applies the shown edits (the last first, so that earlier positions hold).
function M.accept(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = state[bufnr]
  if not s or s.tick ~= vim.api.nvim_buf_get_changedtick(bufnr) then return false end
  M.clear(bufnr)
  for i = #s.edits, 1, -1 do
    local e = s.edits[i]
    vim.api.nvim_buf_set_text(bufnr, e[1], e[2], e[3], e[4], vim.split(e[5], '\n', { plain = true }))
  end
  M.report_accepted(bufnr, s.id, s.length)
  return true
end

-- Moves the cursor to the first shown edit.
function M.jump(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = state[bufnr]
  if not s or #s.edits == 0 then return false end
  vim.api.nvim_win_set_cursor(0, { s.edits[1][1] + 1, s.edits[1][2] })
  return true
end

function M.enable(bufnr, opts)
  opts = vim.tbl_extend('force', defaults, type(opts) == 'table' and opts or {})
  local group = vim.api.nvim_create_augroup('quickfill_next_edit_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI', 'InsertEnter' }, {
    group = group, buffer = bufnr, callback = function() M.clear(bufnr) end,
  })
  if opts.auto then
    vim.api.nvim_create_autocmd({ 'CursorHold', 'InsertLeave' }, {
      group = group, buffer = bufnr, callback = function() M.request(bufnr, false, nil, opts) end,
    })
  end
  local function map(key, fn, desc)
    if not key or key == '' then return end
    vim.keymap.set('n', key, function()
      if not fn(bufnr) then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
      end
    end, { buffer = bufnr, desc = desc })
  end
  map(opts.accept_key, M.accept, 'quickfill: accept the next edit')
  map(opts.jump_key, M.jump, 'quickfill: jump to the next edit')
end

return M
