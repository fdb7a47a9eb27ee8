// The message types are defined beside the machines (which may import nothing from src/).
export * from '../../machines/shared/messages.ts';
