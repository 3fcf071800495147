; Scopes, definitions and references for csp.

[
  (source_file)
  (block)
  (function_declaration)
  (function_expression)
  (lambda)
  (for_statement)
  (list_comprehension)
  (catch_clause)
  (select_case)
] @local.scope

(function_declaration name: (identifier) @local.definition.function)
(parameter name: (identifier) @local.definition.parameter)
(rest_parameter name: (identifier) @local.definition.parameter)
(let_declaration name: (identifier) @local.definition.var)
(for_statement key: (identifier) @local.definition.var)
(for_statement variable: (identifier) @local.definition.var)
(list_comprehension variable: (identifier) @local.definition.var)
(catch_clause name: (identifier) @local.definition.var)
(select_case name: (identifier) @local.definition.var)
(import_statement alias: (identifier) @local.definition.import)

(identifier) @local.reference
