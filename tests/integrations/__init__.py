"""Tests of the framework integrations (docs/issues.md#issue-27): LangGraph, the OpenAI
Agents SDK, Claude's memory tool and the TypeScript client."""
