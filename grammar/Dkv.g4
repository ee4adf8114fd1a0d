// ANTLR4 grammar of the dkv kernel language (docs/language.md); no embedded actions.
grammar Dkv;

// ---------------------------------------------------------------------------
// Parser rules. Expression precedence levels are written as loops (not left
// recursion) so that long operator chains do not recurse in the parser.
// ---------------------------------------------------------------------------

module : topItem* EOF ;

topItem
  : PARAM ID ('=' expr)?                                  # paramDecl
  | CONST ID '=' expr                                     # constDecl
  | MESH meshAxis (',' meshAxis)*                         # meshDecl
  | TENSORCORE_MESH meshAxis                              # tensorcoreMeshDecl
  | KERNEL ID '(' kernelParams? ')' kernelAttr* block     # kernelDecl
  | SEQUENCE '(' kernelParams? ')' '{' seqCall* '}'       # sequenceDecl
  | ';'                                                   # emptyTop
  ;

meshAxis : ID '=' expr ;

kernelParams : kernelParam (',' kernelParam)* ','? ;
kernelParam
  : dir=(IN | OUT | INOUT) name=ID ':' semKind=(SEM | DMA_SEM) shape?                 # semParam
  | dir=(IN | OUT | INOUT) name=ID ':' space=ID dtype=ID shape? ('=' tableLit)?      # bufferParam
  ;
seqCall
  : kernel=ID '(' (ID (',' ID)* ','?)? ')'                                       # callKernel
  | ';'                                                                          # emptyCall
  ;
tableLit : '[' (tableElem (',' tableElem)* ','?)? ']' ;
tableElem : tableLit | expr ;
shape : '[' (expr (',' expr)* ','?)? ']' ;
kernelAttr : ID '(' (expr (',' expr)* ','?)? ')' ;

block : '{' stmt* '}' ;

stmt
  : SCRATCH scratchItem (',' scratchItem)*                          # scratchStmt
  | RUN_SCOPED '(' (scratchItem (',' scratchItem)* ','?)? ')' block # runScopedStmt
  | LET ID (',' ID)* '=' expr                                       # letStmt
  | VAR varItem (',' varItem)*                                      # varStmt
  | IF expr block (ELSE IF expr block)* (ELSE block)?               # ifStmt
  | FOR ID IN expr '..' expr block                                  # forStmt
  | refTarget op=('=' | '+=') expr                                  # storeStmt
  | refTarget '.' ID '(' args? ')'                                  # methodStmt
  | ID '(' args? ')'                                                # callStmt
  | EMIT_PIPELINE '(' pipelineOption (',' pipelineOption)* ','? ')'
    '(' (refTarget (',' refTarget)* ','?)? ')'
    LAMBDA (ID (',' ID)* ','?)? block                               # pipelineStmt
  | ';'                                                             # emptyStmt
  ;

scratchItem
  : ID ':' semKind=(SEM | DMA_SEM) shape?                           # semItem
  | name=ID ':' space=ID dtype=ID shape?                            # bufferItem
  ;

refTarget : ID ('[' subscripts ']')? ;

// emit_pipeline options (docs/language.md "Pipelines"): `grid = (K, 2)`,
// `in_specs = [BlockSpec((8, 128), lambda i, j: (i, 0)), ...]`, `out_specs = [...]`.
pipelineOption
  : ID '=' '(' (expr (',' expr)* ','?)? ')'                         # tupleOption
  | ID '=' '[' (blockSpec (',' blockSpec)* ','?)? ']'               # specsOption
  ;
// Keyword arguments after the index map: `memory_space = vmem` (the block buffers'
// memory space, pipeline.py's default); sema refuses any other.
blockSpec
  : ID '(' '(' (expr (',' expr)* ','?)? ')' ','
    LAMBDA (ID (',' ID)* ','?)? ':' '(' (expr (',' expr)* ','?)? ')'
    (',' specKeyword)* ','? ')'
  ;
specKeyword : key=ID '=' value=ID ;

// `var c`, `var cs[n]`: descriptor variables; `var n = 0`: an integer variable.
varItem : ID shape? ('=' expr)? ;

args : arg (',' arg)* ','? ;
arg : (ID '=')? argValue ;
argValue
  : expr                                                            # exprArg
  | '(' expr ',' (expr (',' expr)* ','?)? ')'                       # tupleArg
  | '{' (mapEntry (',' mapEntry)* ','?)? '}'                        # mappingArg
  | '[' (expr (',' expr)* ','?)? ']'                                # listArg
  ;
mapEntry : ID ':' expr ;

subscripts
  : '...'                                                           # ellipsisSubscripts
  | subscript (',' subscript)* ','?                                 # listSubscripts
  ;
subscript
  : lo=expr? ':' hi=expr?                                           # rangeSubscript
  | expr                                                            # indexSubscript
  ;

expr : andExpr (OR andExpr)* ;
andExpr : notExpr (AND notExpr)* ;
notExpr : NOT notExpr | compExpr ;
compExpr : bitOrExpr (op=('==' | '!=' | '<' | '<=' | '>' | '>=') bitOrExpr)? ;
// Integer bit operators with Python's precedence: | below ^ below & below shifts.
bitOrExpr : bitXorExpr ('|' bitXorExpr)* ;
bitXorExpr : bitAndExpr ('^' bitAndExpr)* ;
bitAndExpr : shiftExpr ('&' shiftExpr)* ;
shiftExpr : addExpr (('<<' | '>>') addExpr)* ;
addExpr : mulExpr (('+' | '-') mulExpr)* ;
mulExpr : unaryExpr (('*' | '/' | '%') unaryExpr)* ;
unaryExpr : '-' unaryExpr | primary ;
primary
  : INT                                                             # intLit
  | FLOAT                                                           # floatLit
  | (TRUE | FALSE)                                                  # boolLit
  | BARRIER                                                         # barrierRef
  | ID '(' args? ')'                                                # callExpr
  | ID '[' subscripts ']'                                           # indexExpr
  | ID                                                              # nameRef
  | '(' expr ')'                                                    # parenExpr
  ;

// ---------------------------------------------------------------------------
// Lexer rules. Built-in function names, memory spaces and element types are
// ordinary identifiers checked by the frontend (better messages than a syntax
// error); only the words below are reserved.
// ---------------------------------------------------------------------------

PARAM : 'param' ;
CONST : 'const' ;
MESH : 'mesh' ;
TENSORCORE_MESH : 'tensorcore_mesh' ;
KERNEL : 'kernel' ;
SEQUENCE : 'sequence' ;
IN : 'in' ;
OUT : 'out' ;
INOUT : 'inout' ;
SCRATCH : 'scratch' ;
RUN_SCOPED : 'run_scoped' ;
LET : 'let' ;
VAR : 'var' ;
IF : 'if' ;
ELSE : 'else' ;
FOR : 'for' ;
SEM : 'sem' ;
DMA_SEM : 'dma_sem' ;
BARRIER : 'barrier' ;
TRUE : 'true' ;
FALSE : 'false' ;
AND : 'and' ;
OR : 'or' ;
NOT : 'not' ;
EMIT_PIPELINE : 'emit_pipeline' ;
LAMBDA : 'lambda' ;

// FLOAT before ID: `inf` (the float infinity) is a float literal, not a name.
FLOAT : DIGITS '.' DIGITS EXPONENT? | DIGITS EXPONENT | 'inf' ;
ID : [A-Za-z_] [A-Za-z0-9_]* ;
INT : DIGITS ;
fragment DIGITS : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

SHL : '<<' ;
SHR : '>>' ;
AMP : '&' ;
PIPE : '|' ;
CARET : '^' ;
ELLIPSIS : '...' ;
DOTDOT : '..' ;
DOT : '.' ;
PLUS_ASSIGN : '+=' ;
EQ : '==' ;
NE : '!=' ;
LE : '<=' ;
GE : '>=' ;
LT : '<' ;
GT : '>' ;
ASSIGN : '=' ;
PLUS : '+' ;
MINUS : '-' ;
STAR : '*' ;
SLASH : '/' ;
PERCENT : '%' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACK : '[' ;
RBRACK : ']' ;
LBRACE : '{' ;
RBRACE : '}' ;
COMMA : ',' ;
COLON : ':' ;
SEMI : ';' ;

LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
// A '/*' without its '*/': matches to the end of the file (a terminated comment is
// always longer as BLOCK_COMMENT). Reported by the frontend.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* -> channel(HIDDEN) ;
WS : [ \t\r\n]+ -> skip ;
// Anything else: reported by the frontend, invisible to the parser.
ERROR_CHAR : . -> channel(HIDDEN) ;
