-- Neovim test of a hostile repository (tests/security/hostile_repo/): its
-- .nvim.lua, run as Neovim 0.9+ runs a trusted exrc file (:trust), sends the
-- quickfill server a remote source on a loopback port where a listening
-- socket records every connection, a key from the environment, an audit log
-- on a file of the user's and a planted model. The real server (through the
-- daemon, as in nvim_test.lua) takes none of it and tells the user
-- (window/showMessage). `nvim --headless -u NONE` runs this file
-- (run_editor_test.sh). Environment: QUICKFILL_BIN, QUICKFILL_MODEL,
-- QUICKFILL_SOURCE_DIR. Exit status: 0 pass, 1 fail, 77 skipped.
local WAIT = tonumber(os.getenv('QUICKFILL_TEST_WAIT_MS') or '') or 300000  -- safety net only

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local t = dofile(here .. '/nvim_test_util.lua').new('nvim_hostile_test')
local out, check = t.out, t.check

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

local function run()
  local bin = os.getenv('QUICKFILL_BIN') or ''
  local src = os.getenv('QUICKFILL_SOURCE_DIR') or ''
  local model = os.getenv('QUICKFILL_MODEL') or ''
  if bin == '' or vim.fn.executable(bin) ~= 1 or src == '' then
    out('SKIP: QUICKFILL_BIN or QUICKFILL_SOURCE_DIR is not set')
    return 77
  end
  local uv = vim.loop

  -- A listening socket on the loopback that records each connection.
  local connections = 0
  local recorder = uv.new_tcp()
  recorder:bind('127.0.0.1', 0)
  recorder:listen(16, function()
    local c = uv.new_tcp()
    recorder:accept(c)
    connections = connections + 1
    c:close()
  end)
  local port = recorder:getsockname().port

  -- The repository, with its places filled in, and a file of the user's.
  local root = vim.fn.tempname() .. '-hostile'
  local repo = root .. '/repo'
  vim.fn.mkdir(root .. '/home', 'p')
  vim.fn.system({ 'cp', '-r', src .. '/tests/security/hostile_repo', repo })
  check(vim.v.shell_error == 0, 'the hostile repository is copied')
  if model ~= '' then vim.fn.system({ 'cp', model, repo .. '/models/planted.gguf' }) end
  local user_file = root .. '/home/.bashrc'
  local user_text = "# the user's shell startup file\nexport PATH=$HOME/bin:$PATH\n"
  write(user_file, user_text)
  for _, name in ipairs({ '.nvim.lua', '.vscode/settings.json', '.dir-locals.el' }) do
    local text = read(repo .. '/' .. name)
    text = text:gsub('@PORT@', tostring(port)):gsub('@USER_FILE@', user_file):gsub('@REPO@', repo)
    write(repo .. '/' .. name, text)
  end
  vim.fn.setenv('QF_HOSTILE_SECRET', 's3cr3t-of-the-user')

  -- What the server shows the user.
  local shown = {}
  vim.lsp.handlers['window/showMessage'] = function(_, result)
    table.insert(shown, result and result.message or '')
  end

  vim.cmd('filetype on')
  local qf = require('quickfill')
  qf.setup({
    binary = bin,
    filetypes = { 'python' },
    root_markers = { 'sample.py' },
    settings = { completion = { autoDeadlineMs = 60000, explicitDeadlineMs = 60000 } },
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(repo .. '/sample.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.wait(WAIT, function()
    local c = qf.get_client(bufnr)
    return c ~= nil and c.initialized == true
  end, 20), 'quickfill attached to the repository\'s file')
  check(vim.wait(WAIT, function()
    local st = qf.status(bufnr)
    return type(st) == 'table' and st.modelLoading == false
  end, 100), 'model load finished')

  -- The repository's .nvim.lua, as Neovim runs a trusted exrc file.
  dofile(repo .. '/.nvim.lua')
  local refusal = 'ignored settings that only the user config file may set: model, completion.draftModel, ' ..
                  'sources, audit.path, audit.includeCode'
  check(vim.wait(WAIT, function()
    for _, m in ipairs(shown) do if m:find(refusal, 1, true) then return true end end
    return false
  end, 50), 'the server says which settings it ignored: ' .. vim.inspect(shown))

  -- Completions go to the local model only.
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '    print(' })
  local line = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_win_set_cursor(0, { line, 10 })
  local start = qf.request_completion(bufnr, true)
  check(start ~= nil, 'an explicit completion is answered')
  local st = qf.status(bufnr)
  check(type(st) == 'table' and #(st.sources or {}) == 1 and st.sources[1].name == 'local',
        'only the implicit local source: ' .. vim.inspect(st and st.sources))
  check(not tostring(st.modelPath or ''):find('planted', 1, true), 'the planted model is not loaded: ' ..
        tostring(st.modelPath))
  vim.wait(500, function() return false end, 50)
  check(connections == 0, 'nothing connected to the repository\'s endpoint')
  check(read(user_file) == user_text, 'the user\'s file is untouched')

  qf.stop()
  check(vim.wait(WAIT, function() return qf.get_client(bufnr) == nil end, 50), 'client stopped')
  recorder:close()
  vim.fn.delete(root, 'rf')
  return 0
end

t.finish(run)
