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
  local function diagnostic(text)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.message:find(text, 1, true) then return d end
    end
    error("no diagnostic " .. text .. ": " .. vim.inspect(vim.diagnostic.get(buf)))
  end
  local d = diagnostic("undefined name 'nope'")
  assert(d.lnum == 5 and d.col == 6, ("diagnostic at %d:%d"):format(d.lnum, d.col))
  assert(d.severity == vim.diagnostic.severity.ERROR, "severity " .. tostring(d.severity))
  -- A lint warning beside the errors.
  local w = diagnostic("variable 'unused' is never used")
  assert(w.severity == vim.diagnostic.severity.WARN and w.lnum == 8, "warning: " .. vim.inspect(w))

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

  -- Quick fixes, applied by the client: "did you mean `twice`?" and `_unused`.
  local function fix(line, col, title)
    local p = { textDocument = { uri = uri }, range = { start = { line = line, character = col }, ["end"] = { line = line, character = col } },
      context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, line) } }
    local r = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", p, 10000)
    assert(r and r[client_id] and r[client_id].result, "no code actions: " .. vim.inspect(r))
    for _, a in ipairs(r[client_id].result) do
      if a.title == title then
        vim.lsp.util.apply_workspace_edit(a.edit, "utf-16")
        return
      end
    end
    error("no action " .. title .. ": " .. vim.inspect(r[client_id].result))
  end
  fix(11, 12, "Change `twicee` to `twice`")
  fix(8, 9, "Rename to `_unused`")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  assert(lines[12] == "print(f(), twice(1))" and lines[9] == "    let _unused = 1", vim.inspect(lines))

  -- Signature help inside `twice(` on line 5.
  params = { textDocument = { uri = uri }, position = { line = 4, character = 12 } }
  res = vim.lsp.buf_request_sync(buf, "textDocument/signatureHelp", params, 10000)
  local sig = res and res[client_id] and res[client_id].result
  assert(sig and sig.signatures[1].label == "fn twice(n)" and sig.activeParameter == 0, "signature help: " .. vim.inspect(res))

  -- Semantic tokens: the first is the keyword `let` (legend index 6).
  res = vim.lsp.buf_request_sync(buf, "textDocument/semanticTokens/full", { textDocument = { uri = uri } }, 10000)
  local data = res and res[client_id] and res[client_id].result and res[client_id].result.data
  assert(data and #data > 20 and data[1] == 0 and data[2] == 0 and data[3] == 3 and data[4] == 6, "tokens: " .. vim.inspect(data))

  -- Inlay hints: the parameter names of lib.add(1, 2), from the other file.
  params = { textDocument = { uri = uri }, range = { start = { line = 0, character = 0 }, ["end"] = { line = 13, character = 0 } } }
  res = vim.lsp.buf_request_sync(buf, "textDocument/inlayHint", params, 10000)
  local hints = res and res[client_id] and res[client_id].result or {}
  local labels = {}
  for _, h in ipairs(hints) do table.insert(labels, h.label) end
  assert(vim.tbl_contains(labels, "a:") and vim.tbl_contains(labels, "b:"), "inlay hints: " .. vim.inspect(hints))

  -- Rename `lib.add` to `sum`: the client applies the edit to lib.csp too.
  vim.wait(300)
  vim.api.nvim_win_set_cursor(0, { 10, 15 })
  vim.lsp.buf.rename("sum")
  local lib_buf
  local renamed = vim.wait(10000, function()
    lib_buf = vim.fn.bufnr(dir .. "/lib.csp")
    return lib_buf ~= -1 and vim.api.nvim_buf_get_lines(lib_buf, 0, 1, false)[1] == "fn sum(a, b) {"
  end, 50)
  assert(renamed, "lib.csp not renamed: " .. vim.inspect(lib_buf ~= -1 and vim.api.nvim_buf_get_lines(lib_buf, 0, -1, false)))
  assert(vim.api.nvim_buf_get_lines(buf, 9, 10, false)[1] == "    return lib.sum(1, 2)", "main.csp not renamed")

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
