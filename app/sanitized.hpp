#pragma once
/// Whether this build runs under a sanitizer's allocator (AddressSanitizer, MemorySanitizer,
/// ThreadSanitizer): GCC says so with __SANITIZE_*__, clang with __has_feature. Such a build
/// keeps its own operator new (app/heap_new.cpp) and never asks glibc for huge pages
/// (app/huge_pages.hpp). CUBESIM_SANITIZED is 1 or 0, for the preprocessor.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUBESIM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define CUBESIM_SANITIZED 1
#endif
#endif
#ifndef CUBESIM_SANITIZED
#define CUBESIM_SANITIZED 0
#endif
