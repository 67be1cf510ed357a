import { InputError } from '../../errors.js';

/** The parts of LangChain the adapter uses at run time (everything else is types only). */
export interface LangchainSdk {
  readonly createMiddleware: typeof import('langchain').createMiddleware;
  readonly messages: Pick<typeof import('@langchain/core/messages'), 'AIMessage' | 'FunctionMessage' | 'HumanMessage' | 'SystemMessage' | 'ToolMessage'>;
  readonly convertToOpenAITool: typeof import('@langchain/core/utils/function_calling').convertToOpenAITool;
}

/** The packages to install, as the error says it. */
export const LANGCHAIN_PACKAGES = 'npm i langchain @langchain/core';

// Loaded once, when ctxfold/langchain is imported. A missing package is not an error here:
// importing the subpath never fails, and `langchainSdk()` names the packages when it is used.
let loaded: LangchainSdk | undefined;
let failure: unknown;
try {
  const [langchain, messages, functionCalling] = await Promise.all([
    import('langchain'),
    import('@langchain/core/messages'),
    import('@langchain/core/utils/function_calling'),
  ]);
  loaded = { createMiddleware: langchain.createMiddleware, messages, convertToOpenAITool: functionCalling.convertToOpenAITool };
} catch (error) {
  failure = error;
}

/**
 * LangChain, when it could be loaded; otherwise an `InputError` that names the packages to
 * install and carries the import error as its cause.
 */
export function langchainSdk(): LangchainSdk {
  if (loaded) return loaded;
  const reason = failure instanceof Error ? failure.message : String(failure);
  throw new InputError('ctxfold/langchain', `needs the packages langchain and @langchain/core, which could not be loaded (${reason}); install them: ${LANGCHAIN_PACKAGES}`, { cause: failure });
}
