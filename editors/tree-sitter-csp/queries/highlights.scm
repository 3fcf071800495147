; Highlights for csp. Later patterns win in tree-sitter-highlight and
; nvim-treesitter alike, so general captures come first.

(identifier) @variable

(property_identifier) @property

(parameter name: (identifier) @variable.parameter)
(rest_parameter name: (identifier) @variable.parameter)

; Functions

(function_declaration name: (identifier) @function)

(call_expression function: (identifier) @function.call)
(call_expression
  function: (member_expression property: (property_identifier) @function.method.call))

(let_declaration
  name: (identifier) @function
  value: [(function_expression) (lambda)])

(pair
  key: (property_identifier) @function.method
  value: [(function_expression) (lambda)])

((identifier) @function.builtin
  (#any-of? @function.builtin
    "abs" "after" "append_file" "args" "assert" "bin" "bytes" "cap" "ceil"
    "chan" "chr" "close" "coroutine" "eprint" "error" "exists" "exit" "float"
    "floor" "format" "from_entries" "hex" "int" "json_decode" "json_encode"
    "len" "max" "min" "mutex" "now" "oct" "ord" "pow" "print" "random" "range"
    "read_file" "read_line" "round" "sleep" "str" "ticker" "type" "waitgroup"
    "write_file" "zip"))

(import_statement alias: (identifier) @module)

; Literals

(string) @string
(escape_sequence) @string.escape
(interpolation
  "${" @punctuation.special
  "}" @punctuation.special) @embedded

(integer) @number
(float) @number.float
[(true) (false)] @boolean
(nil) @constant.builtin

(comment) @comment
(shebang) @keyword.directive

; Keywords

"let" @keyword
"fn" @keyword.function
"return" @keyword.return
["if" "else"] @keyword.conditional
["while" "for" "break" "continue"] @keyword.repeat
(for_statement "in" @keyword.repeat)
(list_comprehension ["for" "in" "if"] @keyword.repeat)
["try" "catch" "finally" "throw"] @keyword.exception
["import" "as"] @keyword.import
["go" "select" "case" "default" "lock" "wait" "yield"] @keyword.coroutine
(break_statement) @keyword.repeat
(continue_statement) @keyword.repeat

; `in`, `not`, `is` as operators
(binary_expression operator: ["in" "not" "is"] @keyword.operator)

; Operators and punctuation

[
  "=" "+=" "-=" "*=" "/=" "%=" "**="
  "==" "!=" "<" "<=" ">" ">="
  "+" "-" "*" "/" "%" "**" "!" "~"
  "&&" "||" "&" "|" "^" "<<" ">>"
  ".." "..=" "..." "<-" "=>" "?" ":"
] @operator

["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," "." ";"] @punctuation.delimiter
