-- What the Neovim tests (nvim_test.lua, nvim_hostile_test.lua) share: output
-- flushed line by line, numbered checks that end the test on the first
-- failure, and running the test's function to Neovim's exit status.
--   local t = dofile(<this folder> .. '/nvim_test_util.lua').new('nvim_test')
--   t.check(cond, 'what holds'); ... t.finish(run, on_failure)
local M = {}

function M.new(name)
  local t = {}
  local checks = 0

  function t.out(msg) io.stdout:write(msg .. '\n'); io.stdout:flush() end

  function t.check(cond, msg)
    checks = checks + 1
    if not cond then error('FAILED: ' .. msg, 2) end
    t.out('ok ' .. checks .. ' - ' .. msg)
  end

  -- Runs run() and quits with what it returns (0 pass, 77 skipped); an error
  -- in it is printed with its traceback, on_failure() (if any) adds what
  -- helps (logs), and the exit status is 1.
  function t.finish(run, on_failure)
    local ok, res = xpcall(run, debug.traceback)
    local code = res
    if not ok then
      t.out(tostring(res))
      if on_failure then on_failure() end
      code = 1
    end
    t.out(name .. ': exit ' .. code)
    vim.cmd((code == 0 and 'qall!') or ('cquit! ' .. code))
  end

  return t
end

return M
