-- Drives Neovim's built-in LSP client (0.7+) against `csp lsp`: run by
-- tests/lsp_nvim.rs as `nvim --headless --clean -u NONE -c "luafile THIS"`
-- with CSP_BIN (the csp binary) and CSP_DIR (a directory holding main.csp).
-- Exits 0 when every check passes; otherwise prints why and exits 1.

local csp, dir = os.getenv("CSP_BIN"), os.getenv("CSP_DIR")

local function check()
  local client_id = vim.lsp.start_client({
    name = "csp",
    cmd = { csp, "lsp" },
    root_dir = dir,
    flags = { debounce_text_changes = 0 },
  })
  assert(client_id, "vim.lsp.start_client gave no client")
  vim.cmd("edit " .. dir .. "/main.csp")
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(buf, client_id), "cannot attach the buffer")

  -- The file's error, as `csp check` words it.
  local got = vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  assert(got, "no diagnostics arrived")
  local d = vim.diagnostic.get(buf)[1]
  assert(d.message:find("undefined name 'nope'", 1, true), "diagnostic message: " .. d.message)
  assert(d.lnum == 5 and d.col == 6, ("diagnostic at %d:%d"):format(d.lnum, d.col))

  -- Go to the definition of `twice` from its call, and jump there.
  local uri = vim.uri_from_bufnr(buf)
  local params = { textDocument = { uri = uri }, position = { line = 4, character = 7 } }
  local res = vim.lsp.buf_request_sync(buf, "textDocument/definition", params, 10000)
  assert(res and res[client_id] and res[client_id].result, "no definition: " .. vim.inspect(res))
  local loc = res[client_id].result
  if loc[1] then loc = loc[1] end
  assert(loc.uri == uri, "definition in " .. tostring(loc.uri))
  vim.lsp.util.jump_to_location(loc, "utf-16")
  local cursor = vim.api.nvim_win_get_cursor(0)
  assert(cursor[1] == 2 and cursor[2] == 3, "jumped to " .. vim.inspect(cursor))

  -- Type `xs.` on a new last line and complete a method of the list.
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "xs." })
  local last = vim.api.nvim_buf_line_count(buf) - 1
  vim.wait(300)
  params = { textDocument = { uri = uri }, position = { line = last, character = 3 } }
  res = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 10000)
  assert(res and res[client_id] and res[client_id].result, "no completion: " .. vim.inspect(res))
  local items = res[client_id].result
  items = items.items or items
  local labels = {}
  for _, item in ipairs(items) do labels[item.label] = true end
  assert(labels.push and labels.pop and not labels.upper, "completion offered: " .. vim.inspect(vim.tbl_keys(labels)))
end

local ok, err = pcall(check)
if ok then
  io.stdout:write("nvim: all checks passed\n")
  vim.cmd("qall!")
else
  io.stderr:write("FAIL: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
