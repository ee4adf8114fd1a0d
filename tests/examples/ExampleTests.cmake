# The tests of every example kernel, registered when CTest runs (a TEST_INCLUDE_FILES
# script of tests/examples/CMakeLists.txt) from the example list that
# tests/examples/example_list.py writes at build time with `dkv parse --annotations`:
# dkv is the one reader of the annotations, so nothing here parses them. Set by the
# includer: DKV (the dkv binary), DKV_SOURCE_DIR, DKV_EXAMPLE_SCRIPTS (this directory),
# DKV_CHECK_EXAMPLE, DKV_LOWER_EXAMPLE. (CTest's add_test takes NAME COMMAND ARGS... only.)

# An example whose annotations dkv refuses: one test, which fails with the diagnostic.
function(dkv_example_broken name example)
  add_test(example.${name}.annotations ${DKV} parse ${example} --annotations)
  set_tests_properties(example.${name}.annotations PROPERTIES LABELS "examples" TIMEOUT 60)
endfunction()

# The counts of `devices` (an example's `// devices:` counts; empty: every count) that
# are in `wanted`.
function(dkv_in devices wanted out)
  set(result)
  foreach(n ${wanted})
    # list(FIND), not IN_LIST: CTest reads this script without policy CMP0057.
    list(FIND devices ${n} at)
    if(NOT devices OR at GREATER -1)
      list(APPEND result ${n})
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# An instance "VALUE|TAG" of a case: sets value (a count or a mesh) and itag (its tag in
# test names) in the caller's scope.
macro(dkv_instance_fields inst)
  string(REPLACE "|" ";" fields_ "${inst}")
  list(GET fields_ 0 value)
  list(GET fields_ 1 itag)
endmacro()

# The tests of every case of an example (CASES of dkv_example), named
# example.NAME.KIND.INSTANCE.with_TAG: the verdict with explore, z3 and auto at each
# count of 2..4 (or mesh), spin and the agreement of every engine at 2 and 3 (or the
# first count up to 4, or each mesh), the Promela compile; as for the default verdict.
# `file_counts` / `file_meshes` are the file's own (for a case without --devices).
function(dkv_example_case_tests name example file_counts file_meshes cases)
  set(k 0)
  foreach(c ${cases})
    math(EXPR k "${k} + 1")
    string(REPLACE "|" ";" fields "${c}")
    list(GET fields 0 tag)
    list(GET fields 1 static)
    list(GET fields 2 instances)
    set(meshes)
    set(counts)
    if(instances MATCHES "^mesh:(.*)$")
      string(REPLACE "/" ";" meshes "${CMAKE_MATCH_1}")
    elseif(instances STREQUAL "-")
      set(meshes ${file_meshes})
      set(counts ${file_counts})
    else()
      string(REPLACE "," ";" counts "${instances}")
    endif()
    set(checked)
    set(spun)
    if(meshes)
      foreach(mesh ${meshes})
        string(REGEX REPLACE "[=,]" "" mtag "${mesh}")
        list(APPEND checked "${mesh}|${mtag}")
        list(APPEND spun "${mesh}|${mtag}")
      endforeach()
    else()
      foreach(n ${counts})
        if(n GREATER_EQUAL 2 AND n LESS_EQUAL 4)
          list(APPEND checked "${n}|${n}")
        endif()
        if(n GREATER_EQUAL 2 AND n LESS_EQUAL 3)
          list(APPEND spun "${n}|${n}")
        endif()
      endforeach()
      if(NOT spun)
        foreach(n ${counts})
          if(n LESS_EQUAL 4 AND NOT spun)
            list(APPEND spun "${n}|${n}")
          endif()
        endforeach()
      endif()
    endif()
    foreach(inst ${checked})
      dkv_instance_fields("${inst}")
      foreach(engine explore z3 auto)
        set(test example.${name}.${engine}.${itag}.with_${tag})
        add_test(${test} ${DKV_CHECK_EXAMPLE} ${DKV} ${example} ${engine} ${value} ""
                         ${k})
        set(labels "examples;smt")
        if(engine STREQUAL "explore")
          set(labels "examples")
        endif()
        if(NOT itag STREQUAL "2")
          list(APPEND labels slow)
        endif()
        set_tests_properties(${test} PROPERTIES LABELS "${labels}" TIMEOUT 300)
      endforeach()
    endforeach()
    foreach(inst ${spun})
      dkv_instance_fields("${inst}")
      if(NOT static)
        add_test(example.${name}.promela.${itag}.with_${tag} ${DKV_SOURCE_DIR}/tests/promela/compile_example.sh
                         ${DKV} ${example} ${value} --case ${k})
        set_tests_properties(example.${name}.promela.${itag}.with_${tag} PROPERTIES
                             LABELS "examples;spin" TIMEOUT 120)
      endif()
      add_test(example.${name}.spin.${itag}.with_${tag} ${DKV_CHECK_EXAMPLE} ${DKV} ${example} spin ${value} "" ${k})
      set_tests_properties(example.${name}.spin.${itag}.with_${tag} PROPERTIES
                           LABELS "examples;spin;slow" TIMEOUT 300)
      add_test(example.${name}.agree.${itag}.with_${tag} ${DKV_EXAMPLE_SCRIPTS}/agree.sh ${DKV} ${example} ${value}
                       --case ${k})
      set_tests_properties(example.${name}.agree.${itag}.with_${tag} PROPERTIES
                           LABELS "examples;spin;slow" TIMEOUT 600)
    endforeach()
  endforeach()
endfunction()

# The spin tests of one instance of an example, named example.NAME.KIND.TAG: the
# emitted Promela passes `spin -a` and `gcc -c` (promela; not for an expected static
# error), `--engine spin` gives the annotated verdict (spin), and every engine agrees
# with explore (agree). INSTANCE is a device count or a `--mesh` value (the scripts
# take a value with '=' as a mesh); TAG is the instance in the test name.
function(dkv_example_spin_tests name example tag instance static_error)
  if(NOT static_error)
    add_test(example.${name}.promela.${tag} ${DKV_SOURCE_DIR}/tests/promela/compile_example.sh
                     ${DKV} ${example} ${instance})
    set_tests_properties(example.${name}.promela.${tag} PROPERTIES LABELS "examples;spin"
                         TIMEOUT 120)
  endif()
  add_test(example.${name}.spin.${tag} ${DKV_CHECK_EXAMPLE} ${DKV} ${example} spin ${instance})
  set_tests_properties(example.${name}.spin.${tag} PROPERTIES LABELS "examples;spin;slow"
                       TIMEOUT 300)
  add_test(example.${name}.agree.${tag} ${DKV_EXAMPLE_SCRIPTS}/agree.sh ${DKV} ${example} ${instance})
  set_tests_properties(example.${name}.agree.${tag} PROPERTIES LABELS "examples;spin;slow"
                       TIMEOUT 600)
endfunction()

# Every test of one example (a line of the example list): NAME (its path under examples/,
# '/' as '.'), its file, the counts of its devices comment, the meshes of its mesh
# comment, whether it expects a static error, and its cases ("TAG|STATIC|INSTANCES").
function(dkv_example name example devices meshes static_error cases)
  if(meshes)
    # A multi-axis example: every test at each of its meshes (test names drop '=' and
    # ','); the scripts pass a DEVICES argument with '=' as --mesh.
    foreach(mesh ${meshes})
      string(REGEX REPLACE "[=,]" "" tag "${mesh}")
      add_test(example.${name}.model.${tag} ${DKV_LOWER_EXAMPLE} ${DKV} ${example} ${mesh})
      set_tests_properties(example.${name}.model.${tag} PROPERTIES LABELS "examples" TIMEOUT 60)
      foreach(engine explore z3 auto)
        set(labels "examples")
        if(engine STREQUAL "z3")
          set(labels "examples;smt")
        endif()
        add_test(example.${name}.${engine}.${tag} ${DKV_CHECK_EXAMPLE} ${DKV} ${example} ${engine} ${mesh})
        set_tests_properties(example.${name}.${engine}.${tag} PROPERTIES LABELS "${labels}"
                             TIMEOUT 300)
      endforeach()
      dkv_example_spin_tests(${name} ${example} ${tag} ${mesh} ${static_error})
    endforeach()
    dkv_example_case_tests(${name} ${example} "" "${meshes}" "${cases}")
    return()
  endif()
  # Lowering: every device count the example is meant for, from 1 to 8.
  dkv_in("${devices}" "1;2;3;4;5;6;7;8" lower_counts)
  foreach(n ${lower_counts})
    add_test(example.${name}.model.${n} ${DKV_LOWER_EXAMPLE} ${DKV} ${example} ${n})
    set_tests_properties(example.${name}.model.${n} PROPERTIES LABELS "examples" TIMEOUT 60)
  endforeach()
  # The other counts of 1..8: lowered or refused with a diagnostic, never a crash.
  foreach(n 1 2 3 4 5 6 7 8)
    list(FIND lower_counts ${n} at)
    if(at EQUAL -1)
      add_test(example.${name}.model.${n}.outside ${DKV_LOWER_EXAMPLE} ${DKV} ${example} ${n} outside)
      set_tests_properties(example.${name}.model.${n}.outside PROPERTIES LABELS "examples"
                           TIMEOUT 60)
    endif()
  endforeach()
  dkv_in("${devices}" "2;3;4" explore_counts)
  # The annotated verdict at N = 2, 3, 4 (N >= 3 slow) with explore, the Z3 engine and
  # the default engine, auto (explore within its budget, else z3; issue 11).
  foreach(engine explore z3 auto)
    set(labels "examples;smt")
    if(engine STREQUAL "explore")
      set(labels "examples")
    endif()
    foreach(n ${explore_counts})
      add_test(example.${name}.${engine}.${n} ${DKV_CHECK_EXAMPLE} ${DKV} ${example} ${engine} ${n})
      set(these ${labels})
      if(n GREATER 2)
        list(APPEND these slow)
      endif()
      set_tests_properties(example.${name}.${engine}.${n} PROPERTIES LABELS "${these}"
                           TIMEOUT 300)
    endforeach()
  endforeach()
  # The spin engine (issue 5). Per example: the emitted model passes `spin -a` and
  # `gcc -c` (fast); `--engine spin` gives the annotated verdict and agrees with
  # `--engine explore` (same exit code and finding kinds) at N = 2, 3 (or the smallest
  # N <= 4 the example allows). Labelled spin; the searches slow. The scripts add the
  # example's `// options:` themselves.
  dkv_in("${devices}" "2;3" spin_counts)
  if(NOT spin_counts)
    dkv_in("${devices}" "4" spin_counts)
  endif()
  # The option #defines of the dump are live: spin -DDMA_CHUNKS=2 -DSEM_UNIT=U
  # [-DENTRY_BARRIER=0] gives the model regenerated with those options (same pan
  # answer and state space). Once per example, at its first spin device count.
  # Not for real/tpu_inference_all_gather_matmul: the script's first plain pan run on
  # its dumped model (`pan -n -m1000000`, not the spin engine's run, which verifies it
  # in seconds) passed 34 million states and 4 GB within 8 minutes and did not finish;
  # the #defines are exercised by every other example. Not for pipeline_recv_race
  # either: its run with the checks off (`-E`, races, exits and lifetimes disabled) must
  # cover the whole state space of the pipeline's double-buffered copies and did not
  # finish within the 300 s limit in a CI run (spin.2 and agree.2, which stop at the
  # first violation, pass in seconds). Not for real/tutorial_reduce_scatter_hbm either:
  # the same plain pan run over its two pipelines per grid step did not finish in 900 s
  # (spin.2, with the spin engine's reductions, takes 9 s). Not for the three
  # TPU-Collectives rings (real/tpu_collectives_all_gather, _all_gather_matmul,
  # _reduce_scatter): the script compares the models compiled without the fused DMA
  # chunks of docs/promela.md (FUSE_DMAS is decided for the generated options only), and
  # without them spin needs 10.9 million states and 1.7 GB for the matmul and runs out
  # of 4 GB on the other two at their N = 4. Not for real/tpu_inference_fused_moe_rs for
  # the same reason: without the fused DMA chunks the plain pan run did not finish in
  # 900 s (2026-11-25; spin.2 and agree.2, on the fused model, take about 2 s each).
  if(NOT static_error AND NOT name STREQUAL "real.tpu_inference_all_gather_matmul"
     AND NOT name STREQUAL "pipeline_recv_race"
     AND NOT name STREQUAL "real.tutorial_reduce_scatter_hbm"
     AND NOT name MATCHES "^real\\.tpu_collectives_(all_gather|all_gather_matmul|reduce_scatter)$"
     AND NOT name STREQUAL "real.tpu_inference_fused_moe_rs")
    list(GET spin_counts 0 n)
    add_test(example.${name}.live.${n} ${DKV_SOURCE_DIR}/tests/promela/live_defines.sh
                     ${DKV} ${example} ${n})
    set_tests_properties(example.${name}.live.${n} PROPERTIES LABELS "examples;spin;slow"
                         TIMEOUT 300)
    # The shipped kernels are larger: live.3 of real/all_gather takes 50 to 90 s in CI
    # (2.4 CPU minutes before the fused steps of docs/promela.md), so theirs are in the
    # campaign (`ctest --test-dir build -L campaign -R live`); every other example's
    # live-defines run exercises the same #defines in CI.
    if(name MATCHES "^real\\.")
      set_tests_properties(example.${name}.live.${n} PROPERTIES TIMEOUT 900
                           LABELS "examples;spin;slow;campaign")
    endif()
  endif()
  foreach(n ${spin_counts})
    dkv_example_spin_tests(${name} ${example} ${n} ${n} ${static_error})
  endforeach()
  dkv_example_case_tests(${name} ${example} "${lower_counts}" "" "${cases}")
endfunction()

