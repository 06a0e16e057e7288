-- Neovim's built-in LSP client on `routex lsp` (run by tests/it/lsp/neovim.rs).
--
--   PATH=dir-of-routex:$PATH ROUTEX_FILE=dir/lb-config.json ROUTEX_OUT=result.json \
--     nvim --headless --clean -c 'luafile init.lua' -c 'luafile tests/lsp/nvim.lua'
--
-- init.lua is the Neovim setup of docs/editors.md, taken from the page by
-- the test, so the documented setup is what runs. This script opens the
-- file (the setup attaches the server), waits for the diagnostics, asks
-- for a hover and a completion, and writes what the client received as
-- JSON to ROUTEX_OUT; the Rust test checks it.

local out = os.getenv("ROUTEX_OUT")
local function finish(result)
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("ROUTEX_FILE")))
local buf = vim.api.nvim_get_current_buf()
local client_id
vim.wait(10000, function()
  client_id = next(vim.lsp.buf_get_clients(buf))
  return client_id ~= nil
end, 20)
if not client_id then
  finish({ error = "the setup attached no client", filetype = vim.bo.filetype })
  return
end

local got = vim.wait(30000, function()
  return #vim.diagnostic.get(buf) > 0
end, 20)
if not got then
  finish({ error = "no diagnostics within 30 s", filetype = vim.bo.filetype })
  return
end

local diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(diagnostics, {
    code = d.code,
    line = d.lnum + 1,
    col = d.col,
    severity = d.severity,
    source = d.source,
  })
end
table.sort(diagnostics, function(a, b)
  return a.line < b.line or (a.line == b.line and a.col < b.col)
end)

-- Hover on the first key of line 4 and completion at the end of line 4's
-- first string, as a user would trigger them.
local function request(method, line, character)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = character },
  }
  local responses = vim.lsp.buf_request_sync(buf, method, params, 10000) or {}
  local response = responses[client_id] or {}
  return response.result
end
local hover = request("textDocument/hover", tonumber(os.getenv("ROUTEX_HOVER_LINE")),
  tonumber(os.getenv("ROUTEX_HOVER_CHARACTER")))
local completion = request("textDocument/completion", tonumber(os.getenv("ROUTEX_HOVER_LINE")),
  tonumber(os.getenv("ROUTEX_HOVER_CHARACTER")))
local labels = {}
for _, item in ipairs((completion and (completion.items or completion)) or {}) do
  table.insert(labels, item.label)
end

vim.lsp.stop_client(client_id)
finish({
  diagnostics = diagnostics,
  hover = hover and hover.contents and hover.contents.value or vim.NIL,
  completion = labels,
  filetype = vim.bo.filetype,
})
