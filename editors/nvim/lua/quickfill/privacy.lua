-- Which buffers quickfill never attaches to (docs/security.md, "Privacy"):
-- a path matching the server's default privacy.exclude list or the `exclude`
-- option of setup{}, or a filetype in `disabled_filetypes`. Such a buffer is
-- never sent to the server; the server applies the same rules (both options
-- are sent to it and added to its own lists), so this is a second line, not
-- the guarantee.
--
-- The globs are the server's (indexing/path_glob.h): `*`, `?`, `[...]` within a
-- path segment, `**` across folders, no '/' = any file or folder name at any
-- depth, a '/' anchors at the start, a match on a folder covers its contents,
-- a trailing '/' matches folders only, `~/` is the home folder; no negation.
local M = {}

-- The server's default privacy.exclude (server/core/privacy_filter.cpp; a server
-- test checks that every entry is here).
M.default_exclude = {
  '.env', '.env.*', '.envrc', '*.pem', '*.key', 'id_rsa*', 'id_ed25519*', 'id_ecdsa*', 'id_dsa*', '*.p12',
  '*.pfx', '*.jks', '*.keystore', '*.kdbx', '*.tfvars', '*.kubeconfig',
  '.npmrc', '.yarnrc.yml', '.pypirc', '.netrc', '.pgpass', '.my.cnf', '.git-credentials', '.htpasswd',
  '.vault-token', '**/.cargo/credentials', '**/.cargo/credentials.toml', '**/.gem/credentials',
  '**/secrets/**', 'secrets.json', 'secrets.yaml', 'secrets.yml', 'secrets.toml', 'credentials.json',
  'client_secret*.json', 'service-account*.json',
  '**/.ssh/**', '**/.gnupg/**', '**/.aws/credentials', '**/.aws/sso/cache/**', '**/.aws/cli/cache/**',
  '**/.config/gcloud/**', '**/.azure/**', '**/.oci/**', '**/.bluemix/**', '**/.docker/config.json',
  '**/.kube/config', '**/.config/gh/hosts.yml', '**/.config/doctl/config.yaml', '**/.config/hcloud/cli.toml',
  '**/.config/rclone/rclone.conf', '**/.databrickscfg', '**/.s3cfg', '**/.boto', '**/.terraform.d/credentials.tfrc.json',
  '**/.fly/config.yml', '**/.wrangler/config/**', '**/.config/op/**',
}

-- One glob segment as an anchored Lua pattern.
local function segment_pattern(seg)
  local out, i = { '^' }, 1
  while i <= #seg do
    local c = seg:sub(i, i)
    if c == '*' then
      table.insert(out, '.*')
    elseif c == '?' then
      table.insert(out, '.')
    elseif c == '\\' and i < #seg then
      i = i + 1
      table.insert(out, '%' .. seg:sub(i, i))
    elseif c == '[' and seg:find(']', i + 2, true) then
      local close = seg:find(']', i + 2, true)
      local body = seg:sub(i + 1, close - 1)
      if body:sub(1, 1) == '!' then body = '^' .. body:sub(2) end
      table.insert(out, '[' .. body:gsub('%%', '%%%%') .. ']')
      i = close
    elseif c:match('%W') then
      table.insert(out, '%' .. c)
    else
      table.insert(out, c)
    end
    i = i + 1
  end
  table.insert(out, '$')
  return table.concat(out)
end

local function split(path)
  local out = {}
  for s in path:gmatch('[^/]+') do table.insert(out, s) end
  return out
end

local function compile(pattern, home)
  local p = pattern
  if p == '~' or p:sub(1, 2) == '~/' then
    if not home or home:sub(1, 1) ~= '/' then return nil end
    p = home .. p:sub(2)
  end
  local dir_only = false
  while p:sub(-1) == '/' do dir_only = true; p = p:sub(1, -2) end
  if p == '' then return nil end
  local parts = split(p)
  if #parts == 0 then return nil end
  if #parts > 1 and parts[#parts] == '**' then table.insert(parts, #parts, '*') end
  local g = { text = pattern, anchored = p:find('/', 1, true) ~= nil, dir_only = dir_only, segs = {}, star = {} }
  for k, s in ipairs(parts) do
    g.star[k] = s == '**'
    g.segs[k] = s == '**' and '' or segment_pattern(s)
  end
  return g
end

-- Pattern segments against path segments 1..n; `**` matches any run (also none).
local function match_segments(g, path, n)
  local p, t, star_p, star_t = 1, 1, nil, 1
  while t <= n do
    if p <= #g.segs and g.star[p] then
      star_p, star_t, p = p, t, p + 1
    elseif p <= #g.segs and path[t]:match(g.segs[p]) then
      p, t = p + 1, t + 1
    elseif star_p then
      p, star_t = star_p + 1, star_t + 1
      t = star_t
    else
      return false
    end
  end
  while p <= #g.segs and g.star[p] do p = p + 1 end
  return p > #g.segs
end

local function glob_matches(g, path)
  local segs = split(path)
  for k = 1, #segs do
    if g.dir_only and k == #segs then break end
    if g.anchored then
      if match_segments(g, segs, k) then return true end
    elseif segs[k]:match(g.segs[1]) then
      return true
    end
  end
  return false
end

-- The first of `patterns` matching `path` (absolute or relative), or nil.
function M.matching_pattern(patterns, path, home)
  for _, p in ipairs(patterns) do
    local g = compile(p, home)
    if g and glob_matches(g, path) then return p end
  end
  return nil
end

-- Why the file `path` ('' when none) with filetype `ft` is private, or nil.
-- `exclude` and `disabled` are the options of setup{}; `roots` the folders
-- its paths are also matched relative to.
function M.why_private(path, ft, exclude, disabled, roots, home)
  for _, d in ipairs(disabled or {}) do
    if d == ft then return 'filetype ' .. ft .. ' is in disabled_filetypes' end
  end
  if not path or path == '' then return nil end
  local patterns = vim.list_extend(vim.deepcopy(M.default_exclude), exclude or {})
  local hit = M.matching_pattern(patterns, path, home)
  for _, r in ipairs(roots or {}) do
    if hit then break end
    r = r:gsub('/+$', '')
    if r ~= '' and path:sub(1, #r + 1) == r .. '/' then hit = M.matching_pattern(patterns, path:sub(#r + 2), home) end
  end
  return hit and ('it matches the privacy.exclude pattern ' .. hit) or nil
end

return M
