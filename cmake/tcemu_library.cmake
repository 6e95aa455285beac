# tcemu_add_library(NAME EXPORT_SET SOURCES...): the library of the folder NAME/, the target
# tcemu_NAME, called tcemu::NAME in this tree (an alias) and once installed (its export name). Its
# public headers (NAME/include/tcemu/NAME/) and C++20 are usage requirements; the house warnings
# apply to its own sources only and stay out of the exported interface. It installs into
# EXPORT_SET with its headers.
function(tcemu_add_library name export_set)
  set(target tcemu_${name})
  add_library(${target} ${ARGN})
  add_library(tcemu::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:tcemu_warnings>)
  install(TARGETS ${target} EXPORT ${export_set})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
